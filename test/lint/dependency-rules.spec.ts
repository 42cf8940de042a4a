import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const root = resolve(__dirname, '../..');

/**
 * A throwaway tree with the project's tsconfig paths, the real dependency-cruiser config (with the real reviewed module
 * graph, docs/module-graph.json) and the entity check, so each rule is shown to fail on the mistake it names (and to
 * pass on the clean version of the same tree). Its two modules are named after real ones joined by a reviewed arrow:
 * inference → providers.
 */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'hecate-boundaries-'));
  const base = {
    'tsconfig.json': JSON.stringify({
      compilerOptions: {
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2023',
        strict: true,
        experimentalDecorators: true,
        skipLibCheck: true,
        types: [],
        paths: { '@core/*': ['./src/core/*'], '@modules/*': ['./src/modules/*'] },
      },
      include: ['src/**/*.ts'],
    }),
    'src/modules/providers/index.ts': "export { AService } from './a.service';\n",
    'src/modules/providers/a.service.ts': 'export class AService {\n  hello(): string {\n    return "a";\n  }\n}\n',
    'src/modules/providers/a.entity.ts': 'export class AEntity {\n  id!: string;\n}\n',
    'src/modules/inference/index.ts': "export { BService } from './b.service';\n",
    'src/modules/inference/b.service.ts':
      "import { AService } from '@modules/providers';\nexport class BService {\n  constructor(readonly a: AService) {}\n}\n",
  };
  for (const [file, text] of Object.entries({ ...base, ...files })) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

function cruise(dir: string, paths = ['src']): string {
  const r = spawnSync(
    process.execPath,
    [
      join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'),
      ...paths,
      '--config',
      join(root, '.dependency-cruiser.cjs'),
      '--output-type',
      'err',
    ],
    { cwd: dir, encoding: 'utf8' },
  );
  return r.status === 0 ? '' : `${r.stdout}${r.stderr}`;
}

function entityCheck(dir: string): string {
  const r = spawnSync(process.execPath, [join(root, 'test/lint/entity-exports.mjs'), '--root', dir], { cwd: root, encoding: 'utf8' });
  return r.status === 0 ? '' : `${r.stdout}${r.stderr}`;
}

describe('dependency rules (npm run lint: dependency-cruiser + entity check)', () => {
  const dirs: string[] = [];
  const make = (files: Record<string, string>) => {
    const d = tree(files);
    dirs.push(d);
    return d;
  };
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('passes a clean tree', () => {
    const d = make({});
    expect(cruise(d)).toBe('');
    expect(entityCheck(d)).toBe('');
  });

  it('fails on a cycle, type-only imports included', () => {
    const d = make({
      'src/modules/providers/a.service.ts': "import type { BService } from '@modules/inference';\nexport class AService {\n  b?: BService;\n}\n",
    });
    expect(cruise(d)).toContain('no-circular');
  });

  it('fails on an arrow between two modules that docs/module-graph.json does not list, and names it', () => {
    const d = make({
      'src/modules/events/index.ts': 'export const feed = 1;\n',
      'src/modules/providers/a.service.ts': "import { feed } from '@modules/events';\nexport class AService {\n  f = feed;\n}\n",
    });
    const out = cruise(d);
    expect(out).toContain('module-arrow-not-reviewed: src/modules/providers/a.service.ts → src/modules/events/index.ts');
    expect(out).toContain('1 dependency violations');
  });

  it('passes the same import from a test file (tests may reach any module)', () => {
    const d = make({
      'src/modules/events/index.ts': 'export const feed = 1;\n',
      'src/modules/providers/a.spec.ts': "import { feed } from '@modules/events';\nexport const f = feed;\n",
    });
    expect(cruise(d)).toBe('');
  });

  it('fails when a module missing from docs/module-graph.json imports another module', () => {
    const d = make({ 'src/modules/newcomer/index.ts': "import { AService } from '@modules/providers';\nexport const n = AService;\n" });
    expect(cruise(d)).toContain('module-not-in-graph: src/modules/newcomer/index.ts → src/modules/providers/index.ts');
  });

  it('fails when libs/contracts imports anything of ours', () => {
    const d = make({
      'src/core/x.ts': 'export const x = 1;\n',
      'libs/contracts/src/index.ts': "import { x } from '../../../src/core/x';\nexport const y = x;\n",
    });
    expect(cruise(d, ['src', 'libs'])).toContain('contracts-import-nothing-of-ours: libs/contracts/src/index.ts → src/core/x.ts');
  });

  it('fails on a deep import past a module index.ts', () => {
    const d = make({
      'src/modules/inference/b.service.ts':
        "import { AService } from '@modules/providers/a.service';\nexport class BService {\n  constructor(readonly a: AService) {}\n}\n",
    });
    expect(cruise(d)).toContain('no-deep-import');
  });

  it("fails when a module imports another module's entity", () => {
    const d = make({
      'src/modules/inference/b.service.ts': "import { AEntity } from '@modules/providers/a.entity';\nexport class BService {\n  row?: AEntity;\n}\n",
    });
    expect(cruise(d)).toContain('no-foreign-entity');
  });

  it('fails when an entity crosses a module through an alias or a service signature', () => {
    const alias = make({
      'src/modules/providers/index.ts': "export { AService } from './a.service';\nexport type { ARecord } from './a.service';\n",
      'src/modules/providers/a.service.ts': "import { AEntity } from './a.entity';\nexport type ARecord = AEntity;\nexport class AService {}\n",
    });
    expect(entityCheck(alias)).toContain('type ARecord stands for the entity AEntity');
    const returned = make({
      'src/modules/providers/a.service.ts':
        "import { AEntity } from './a.entity';\nexport class AService {\n  async find(): Promise<AEntity[]> {\n    return [];\n  }\n}\n",
    });
    expect(entityCheck(returned)).toContain('AService.find takes or returns the entity AEntity');
  });

  it('fails when core imports a module, or a module imports an edge', () => {
    const d = make({
      'src/core/x.ts': "import { AService } from '@modules/providers';\nexport const x = AService;\n",
      'src/modules/gateway/index.ts': 'export const edge = 1;\n',
      'src/modules/providers/a.service.ts': "import { edge } from '@modules/gateway';\nexport class AService {\n  e = edge;\n}\n",
    });
    const out = cruise(d);
    expect(out).toContain('no-core-to-modules');
    expect(out).toContain('no-importing-edges');
  });

  it('fails on Fastify outside controllers, core/http and the edges', () => {
    const d = make({ 'src/modules/providers/a.service.ts': "import type { FastifyReply } from 'fastify';\nexport class AService {\n  r?: FastifyReply;\n}\n" });
    expect(cruise(d)).toContain('fastify-only-at-the-edge');
  });
});
