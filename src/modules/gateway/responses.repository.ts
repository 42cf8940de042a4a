import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { execSql, pruneByAgeAndCount } from '@core/database/sql';
import { storableJson } from '@core/database/storable';
import type { Json } from '@modules/inference';
import type { ResponseItem } from './protocol/responses-request';

export interface StoredResponse {
  id: string;
  tenantId: string;
  apiKeyId: string | null;
  previousResponseId: string | null;
  model: string;
  status: string;
  inputItems: ResponseItem[];
  output: ResponseItem[];
  response: Json;
}

/** The most links `previous_response_id` is followed back (a guard against a cycle written by hand). */
const MAX_CHAIN = 10_000;

/** `gateway_responses`: stored Responses API responses, always read within their tenant. */
@Injectable()
export class ResponsesRepository {
  constructor(private readonly dataSource: DataSource) {}

  private get manager(): EntityManager {
    return this.dataSource.manager;
  }

  /**
   * Stored before the response is sent (the client's next call may name it at once), without waiting for the WAL
   * flush: `synchronous_commit = off` for this one transaction. The row is visible to every reader at commit; a
   * database crash can lose the responses of its last few hundred milliseconds, never corrupt anything. On this VM
   * the flush was 2.5 ms of the request's 3 ms. PGlite (embedded) already runs with relaxed durability: one statement.
   */
  async insert(r: StoredResponse): Promise<void> {
    if (!(this.dataSource.options as { url?: string }).url) return this.insertIn(this.manager, r);
    await this.dataSource.transaction(async (m) => {
      await m.query(`SET LOCAL synchronous_commit TO OFF`);
      await this.insertIn(m, r);
    });
  }

  private async insertIn(m: EntityManager, r: StoredResponse): Promise<void> {
    await execSql(
      m,
      `INSERT INTO gateway_responses (id, tenant_id, api_key_id, previous_response_id, model, status, input_items, output, response)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (id) DO NOTHING`,
      [
        r.id,
        r.tenantId,
        r.apiKeyId,
        r.previousResponseId,
        r.model,
        r.status,
        // A model's output may hold NUL, which jsonb cannot: stored as U+FFFD (the client got the response as sent).
        storableJson(r.inputItems),
        storableJson(r.output),
        storableJson(r.response),
      ],
    );
  }

  async find(tenantId: string, id: string): Promise<{ response: Json; inputItems: ResponseItem[] } | null> {
    const { rows } = await execSql<{ response: Json; input_items: ResponseItem[] }>(
      this.manager,
      `SELECT response, input_items FROM gateway_responses WHERE id = $1 AND tenant_id = $2`,
      [id, tenantId],
    );
    return rows[0] ? { response: rows[0].response, inputItems: rows[0].input_items } : null;
  }

  /**
   * The conversation a response continues: every input and output item of the chain ending at `id`, oldest first.
   * Null when `id` is not a response of this tenant.
   */
  async history(tenantId: string, id: string): Promise<ResponseItem[] | null> {
    const { rows } = await execSql<{ input_items: ResponseItem[]; output: ResponseItem[] }>(
      this.manager,
      `WITH RECURSIVE chain (id, previous_response_id, input_items, output, depth) AS (
         SELECT id, previous_response_id, input_items, output, 0 FROM gateway_responses WHERE id = $1 AND tenant_id = $2
         UNION ALL
         SELECT r.id, r.previous_response_id, r.input_items, r.output, c.depth + 1
           FROM gateway_responses r JOIN chain c ON r.id = c.previous_response_id
          WHERE r.tenant_id = $2 AND c.depth < $3
       )
       SELECT input_items, output FROM chain ORDER BY depth DESC`,
      [id, tenantId, MAX_CHAIN],
    );
    if (rows.length === 0) return null;
    return rows.flatMap((r) => [...r.input_items, ...r.output]);
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    const { affected } = await execSql(this.manager, `DELETE FROM gateway_responses WHERE id = $1 AND tenant_id = $2`, [id, tenantId]);
    return affected > 0;
  }

  /** Retention: responses older than `olderThan`, then all but the newest `keepNewest`. */
  async prune(olderThan: Date, keepNewest: number): Promise<number> {
    return pruneByAgeAndCount(this.manager, { table: 'gateway_responses' }, olderThan, keepNewest);
  }
}
