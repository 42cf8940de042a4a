import { Injectable } from '@nestjs/common';
import { AppConfig } from '@core/config/app-config';
import { NotFoundError } from '@core/http/domain-error';
import { type AdapterDefinition, BUILT_IN_ADAPTERS, parseOperatorAdapters } from './adapter-definitions';

/** The registered adapters (built-in, then GATEWAY_AGENT_ADAPTERS), the same in every process; parsed once at boot. */
@Injectable()
export class AdapterCatalog {
  private readonly defs: AdapterDefinition[];

  constructor(config: AppConfig) {
    this.defs = [...BUILT_IN_ADAPTERS, ...parseOperatorAdapters(config.agent.adapters.operatorDefined)];
  }

  all(): AdapterDefinition[] {
    return this.defs;
  }

  find(id: string): AdapterDefinition | undefined {
    return this.defs.find((d) => d.id === id);
  }

  /** The adapter, or 404 `not_found` (docs/api.md §4: an unregistered id). */
  require(id: string): AdapterDefinition {
    const def = this.find(id);
    if (!def) throw new NotFoundError(`agent adapter "${id}" is not registered`, { details: { adapter_id: id } });
    return def;
  }
}
