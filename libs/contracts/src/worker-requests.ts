/**
 * The worker-request registry: every kind of request the api asks a worker to run and waits for (core/lease
 * WorkerRequests), its payload (stored on the `worker_requests` row) and its answer. Asking is type-checked against
 * this map; a worker refuses to boot if a kind has no `@WorkerRequestHandler` or two (docs/style.md rule 3).
 * Answers whose full shape belongs to the module that renders them are JSON objects here; that module narrows them.
 */
type JsonObject = Record<string, unknown>;

export type WorkerRequestTypes = {
  /** A task's create-time workspace checks: the problems found (empty when none). */
  'task.check': { payload: { task: object; caller: object }; answer: { problems: string[] } };
  /** A workspace path made canonical (host paths allowed unless `host_paths` is false). */
  'workspace.canonical': { payload: { path: string; host_paths?: boolean }; answer: { path: string } };
  /** Ephemeral workspaces removed: how many were. */
  'workspace.remove': { payload: { paths: string[] }; answer: { removed: number } };
  /** Patch review: the patch response the worker rendered (docs/api.md §4 `patches`). */
  'patch.apply': { payload: PatchRequest; answer: JsonObject };
  'patch.revert': { payload: PatchRequest; answer: JsonObject };
  /** `/hecate/v1/agent-adapters`: list, health, probe or refresh, and the rows and health the worker found. */
  'agent_adapters.request': {
    payload: { action: 'list' | 'health' | 'probe' | 'refresh'; adapterId?: string };
    answer: { rows?: JsonObject[]; health?: JsonObject };
  };
  /** `POST …/revert` of an Agent Chat message: which captured changes, and what still differs afterwards. */
  'agent_chat.revert': {
    payload: { session_id: string; message_id: string; paths: string[] };
    answer: { reverted: boolean; paths: string[]; diff_stat: string; files: JsonObject[] };
  };
  /** `POST /hecate/v1/mcp/probe`: the server's entry is the api's unstored input; the answer is its tools. */
  'mcp.probe': { payload: { server: string }; answer: { tools: Array<{ name: string; description?: string; input_schema: JsonObject }> } };
  /** Opens a new External Agent session's adapter (initialize + session/new) on a worker of the runs queue. */
  'agent_chat.adapter_open': { payload: { session_id: string }; answer: Record<string, never> };
};

/** The payload of `patch.apply` and `patch.revert`: the artifact and the request it came from. */
export interface PatchRequest {
  taskId: string;
  runId: string;
  artifactId: string;
  origin: { requestId: string; traceId?: string } | null;
}

export type WorkerRequestKind = keyof WorkerRequestTypes;

/**
 * Every kind, at run time (the boot check reads it): `input` — the handler needs the api's unstored input
 * (`AskOptions.input`), handed over the bus once a worker holds the request.
 */
export const WORKER_REQUEST_KINDS: { readonly [K in WorkerRequestKind]: { readonly input: boolean } } = {
  'task.check': { input: false },
  'workspace.canonical': { input: false },
  'workspace.remove': { input: false },
  'patch.apply': { input: false },
  'patch.revert': { input: false },
  'agent_adapters.request': { input: false },
  'agent_chat.revert': { input: false },
  'mcp.probe': { input: true },
  'agent_chat.adapter_open': { input: false },
};
