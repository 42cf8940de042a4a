import { MigrationInterface, QueryRunner } from 'typeorm';

/** Gateway: providers, capability overrides/probes, price overrides and the usage ledger. */
export class GatewayProviders1795345195856 implements MigrationInterface {
  name = 'GatewayProviders1795345195856';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE gateway_providers (
        id                  text PRIMARY KEY,
        preset_id           text,
        custom_name         text,
        kind                text NOT NULL,
        protocol            text NOT NULL,
        base_url            text NOT NULL,
        default_model       text,
        api_key_ciphertext  text,
        enabled             boolean NOT NULL DEFAULT true,
        created_at          timestamptz NOT NULL DEFAULT now(),
        updated_at          timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE gateway_model_capabilities (
        provider            text NOT NULL,
        model               text NOT NULL,
        source              text NOT NULL,
        tool_calling        text,
        streaming           boolean,
        max_context_tokens  integer,
        image_input         text,
        note                text,
        updated_at          timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (provider, model, source)
      )`);
    await q.query(`
      CREATE TABLE gateway_pricing_overrides (
        provider                                    text NOT NULL,
        model                                       text NOT NULL,
        input_micros_usd_per_million_tokens         bigint NOT NULL,
        output_micros_usd_per_million_tokens        bigint NOT NULL,
        cached_input_micros_usd_per_million_tokens  bigint NOT NULL,
        updated_at                                  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (provider, model)
      )`);
    await q.query(`
      CREATE TABLE usage_events (
        id                   uuid PRIMARY KEY,
        tenant_id            text NOT NULL,
        request_id           text NOT NULL,
        trace_id             text,
        api_key_id           text,
        provider             text NOT NULL,
        provider_kind        text NOT NULL,
        model                text NOT NULL,
        route_reason         text NOT NULL,
        endpoint             text NOT NULL,
        attempt              integer NOT NULL,
        status               text NOT NULL,
        error_type           text,
        stream               boolean NOT NULL,
        input_tokens         integer NOT NULL DEFAULT 0,
        output_tokens        integer NOT NULL DEFAULT 0,
        cached_input_tokens  integer NOT NULL DEFAULT 0,
        cost_micros_usd      bigint NOT NULL DEFAULT 0,
        latency_ms           integer NOT NULL,
        first_byte_ms        integer,
        created_at           timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX usage_events_tenant_created_idx ON usage_events (tenant_id, created_at DESC)`);
    await q.query(`CREATE INDEX usage_events_request_idx ON usage_events (request_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE usage_events`);
    await q.query(`DROP TABLE gateway_pricing_overrides`);
    await q.query(`DROP TABLE gateway_model_capabilities`);
    await q.query(`DROP TABLE gateway_providers`);
  }
}
