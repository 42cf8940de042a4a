// Reading the chart's values.schema.json alongside values.yaml: which paths the schema describes, and
// the structured keys (objects with declared properties) whose every key the chart documents.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { isYamlMap, type YamlMap } from '../helm';

export function readSchema(chartDir: string): YamlMap {
  const parsed: unknown = JSON.parse(readFileSync(path.join(chartDir, 'values.schema.json'), 'utf8'));
  if (!isYamlMap(parsed)) throw new Error('values.schema.json is not a JSON object');
  return parsed;
}

export class ValuesSchema {
  private readonly definitions: YamlMap;

  constructor(readonly root: YamlMap) {
    this.definitions = isYamlMap(root.definitions) ? root.definitions : {};
  }

  /** The node itself, or the definition its `$ref` names. */
  resolve(node: unknown): YamlMap | undefined {
    if (!isYamlMap(node)) return undefined;
    const ref = node.$ref;
    return typeof ref === 'string' ? this.resolve(this.definitions[ref.replace('#/definitions/', '')]) : node;
  }

  /** Declared properties of an object node (undefined for free-form objects and non-objects). */
  properties(node: unknown): YamlMap | undefined {
    const properties = this.resolve(node)?.properties;
    return isYamlMap(properties) ? properties : undefined;
  }

  /**
   * Whether a values path (`api.ingress.hosts.[].host`; `[]` = any element or map value) is described:
   * by a declared property, by an `items` / `additionalProperties` schema, or under a free-form object.
   */
  describes(path: string[]): boolean {
    let node: YamlMap | undefined = this.root;
    for (const segment of path) {
      if (!node) return false;
      const properties = this.properties(node);
      const additional = node.additionalProperties;
      if (segment === '[]') {
        if (node.items !== undefined) node = this.resolve(node.items);
        else if (isYamlMap(additional)) node = this.resolve(additional);
        else return properties !== undefined || node.type === 'object';
      } else if (properties && segment in properties) {
        node = this.resolve(properties[segment]);
      } else if (isYamlMap(additional)) {
        node = this.resolve(additional);
      } else {
        // A free-form object (no declared properties, additional keys allowed) holds any path.
        return !properties && additional !== false && (node.type === 'object' || node.type === undefined);
      }
    }
    return node !== undefined;
  }
}
