// docker-compose.yml as Docker Compose v2 reads it, for the tests: YAML merge keys (`<<: *anchor`) resolved, then
// `${VAR}` interpolation over every value with the Compose spec's forms (`$VAR`, `${VAR}`, `${VAR:-default}`,
// `${VAR-default}`, `${VAR:?error}`, `${VAR?error}`, `${VAR:+alt}`, `${VAR+alt}`, `$$`), a missing required variable
// an error with its message. There is no Compose v2 on these machines (no Docker engine, no compose plugin, nothing on
// npm that bundles it), and Debian's docker-compose 1.29 refuses this file outright (top-level `name`, `env_file` with
// `required`), so this is the renderer; `security_opt: seccomp=<file>` resolves against the file's directory, as
// Compose v2 does before it hands the profile's JSON to the engine.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { load, YAML11_SCHEMA } from 'js-yaml';
import { isYamlMap, type YamlMap } from './helm';

export const COMPOSE_FILE = path.resolve(__dirname, '../../docker-compose.yml');

export interface ComposeProject {
  /** The directory relative paths in the file resolve against (the file's own). */
  dir: string;
  name: string;
  services: Record<string, YamlMap>;
  /** The whole interpolated document (extension fields `x-*` included). */
  document: YamlMap;
}

/** Renders `file` with `env` as the environment Compose interpolates from (the shell plus `.env`). */
export function renderCompose(env: Record<string, string | undefined>, file = COMPOSE_FILE): ComposeProject {
  // YAML 1.1's schema: the one js-yaml resolves `<<` merge keys in (Compose's YAML reader honours them too).
  const parsed = load(readFileSync(file, 'utf8'), { schema: YAML11_SCHEMA });
  if (!isYamlMap(parsed)) throw new Error(`${file} is not a YAML mapping`);
  const document = interpolateTree(parsed, env, []) as YamlMap;
  const services = document.services;
  if (!isYamlMap(services)) throw new Error(`${file} has no services`);
  return { dir: path.dirname(file), name: String(document.name), services: services as Record<string, YamlMap>, document };
}

function interpolateTree(value: unknown, env: Record<string, string | undefined>, at: string[]): unknown {
  if (typeof value === 'string') return interpolate(value, env, at.join('.'));
  if (Array.isArray(value)) return value.map((item, i) => interpolateTree(item, env, [...at, String(i)]));
  if (isYamlMap(value)) return Object.fromEntries(Object.entries(value).map(([key, v]) => [key, interpolateTree(v, env, [...at, key])]));
  return value;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

/** One string with the Compose spec's interpolation; `where` names the field in errors, as Compose does. */
export function interpolate(text: string, env: Record<string, string | undefined>, where = ''): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const dollar = text.indexOf('$', i);
    if (dollar < 0) return out + text.slice(i);
    out += text.slice(i, dollar);
    const next = text[dollar + 1];
    if (next === '$') {
      out += '$';
      i = dollar + 2;
    } else if (next === '{') {
      const close = matchingBrace(text, dollar + 1);
      if (close < 0) throw new Error(`invalid interpolation format for ${where}: "${text}"`);
      out += braced(text.slice(dollar + 2, close), env, where);
      i = close + 1;
    } else {
      const name = NAME.exec(text.slice(dollar + 1))?.[0];
      if (!name) throw new Error(`invalid interpolation format for ${where}: "${text}"`);
      out += env[name] ?? '';
      i = dollar + 1 + name.length;
    }
  }
  return out;
}

/** The index of the `}` closing the `{` at `open`, nested `${…}` in a default skipped over; -1 when there is none. */
function matchingBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return i;
  }
  return -1;
}

function braced(body: string, env: Record<string, string | undefined>, where: string): string {
  const name = NAME.exec(body)?.[0];
  if (!name) throw new Error(`invalid interpolation format for ${where}: "\${${body}}"`);
  const rest = body.slice(name.length);
  const value = env[name];
  if (rest === '') return value ?? '';
  const operator = /^(:?[-?+])/.exec(rest)?.[1];
  if (!operator) throw new Error(`invalid interpolation format for ${where}: "\${${body}}"`);
  const operand = () => interpolate(rest.slice(operator.length), env, where);
  // With a colon an empty value counts as unset; without one only an unset variable does.
  const set = operator.startsWith(':') ? value !== undefined && value !== '' : value !== undefined;
  switch (operator.replace(':', '')) {
    case '-':
      return set ? value! : operand();
    case '+':
      return set ? operand() : '';
    default:
      if (!set) throw new Error(`required variable ${name} is missing a value: ${operand()}`);
      return value!;
  }
}

/** A service's `environment` as a map (Compose accepts a map or a `KEY=value` list). */
export function serviceEnvironment(service: YamlMap): Record<string, string> {
  const environment = service.environment;
  if (Array.isArray(environment)) {
    return Object.fromEntries(
      environment.map((entry) => {
        const [key, ...value] = String(entry).split('=');
        return [key, value.join('=')];
      }),
    );
  }
  if (!isYamlMap(environment)) return {};
  return Object.fromEntries(Object.entries(environment).map(([key, value]) => [key, value === null ? '' : String(value)]));
}

/** A service's `security_opt` entries split into option → value (`seccomp=./x.json` and `seccomp:./x.json` alike). */
export function securityOptions(service: YamlMap): Record<string, string> {
  const options = (service.security_opt ?? []) as unknown[];
  return Object.fromEntries(
    options.map((option) => {
      const text = String(option);
      const at = /[=:]/.exec(text)?.index ?? text.length;
      return [text.slice(0, at), text.slice(at + 1)];
    }),
  );
}
