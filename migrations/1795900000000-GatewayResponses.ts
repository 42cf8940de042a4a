import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Stored responses of the OpenAI Responses API (`POST /v1/responses` with `store`): tenant-scoped; a
 * response's own input items and output items, so `previous_response_id` replays the chain as input to any provider.
 */
export class GatewayResponses1795900000000 implements MigrationInterface {
  name = 'GatewayResponses1795900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE gateway_responses (
      id text PRIMARY KEY,
      tenant_id text NOT NULL,
      api_key_id text,
      previous_response_id text,
      model text NOT NULL,
      status text NOT NULL,
      input_items jsonb NOT NULL,
      output jsonb NOT NULL,
      response jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`CREATE INDEX gateway_responses_tenant_created ON gateway_responses (tenant_id, created_at)`);
    await q.query(`CREATE INDEX gateway_responses_created ON gateway_responses (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE gateway_responses`);
  }
}
