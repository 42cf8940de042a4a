import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { Injectable } from '@nestjs/common';
import { readProcessEnv } from '@core/config/env';
import { parseModelList } from './model-discovery.service';
import { PROVIDER_PRESETS, ProviderPreset } from './provider-presets';

const PROBE_TIMEOUT_MS = 700;

interface ProbeResult {
  ok: boolean;
  models: string[];
}

async function onPath(command: string, pathVar: string | undefined): Promise<string | undefined> {
  for (const dir of (pathVar ?? '').split(delimiter).filter(Boolean)) {
    const candidate = join(dir, command);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  return undefined;
}

async function probe(url: string): Promise<ProbeResult> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS), headers: { accept: 'application/json' } });
    if (!res.ok) return { ok: false, models: [] };
    const text = await res.text();
    try {
      return { ok: true, models: parseModelList(JSON.parse(text)) };
    } catch {
      return { ok: true, models: [] };
    }
  } catch {
    return { ok: false, models: [] };
  }
}

export const probeUrlOf = (p: ProviderPreset): string => (p.id === 'ollama' ? `${new URL(p.baseUrl).origin}/api/tags` : `${p.baseUrl}/models`);

/**
 * Advisory local-runtime discovery (docs/api.md, "local-discovery"): PATH lookup of each preset's command and one HTTP
 * probe per unique default endpoint (shared endpoints are probed once). Creates nothing.
 */
@Injectable()
export class LocalDiscoveryService {
  async discover() {
    const presets = PROVIDER_PRESETS.filter((p) => p.kind === 'local');
    const pathVar = readProcessEnv().PATH;
    const probes = new Map<string, Promise<ProbeResult>>();
    for (const p of presets) {
      const url = probeUrlOf(p);
      if (!probes.has(url)) probes.set(url, probe(url));
    }
    return Promise.all(
      presets.map(async (p) => {
        const url = probeUrlOf(p);
        const [result, commandPath] = await Promise.all([probes.get(url) as Promise<ProbeResult>, p.command ? onPath(p.command, pathVar) : undefined]);
        const status = result.ok ? 'running' : commandPath ? 'installed' : 'not_detected';
        return {
          preset_id: p.id,
          name: p.name,
          base_url: p.baseUrl,
          probe_url: url,
          status,
          command: p.command ?? '',
          command_available: commandPath !== undefined,
          ...(commandPath ? { command_path: commandPath } : {}),
          http_available: result.ok,
          model_count: result.models.length,
          models: result.models,
        };
      }),
    );
  }
}
