// The Hecate API as the benchmarks call it.

/** `method path` with a bearer token and a JSON body; answers the envelope's `data` (the body itself when it has none), throws on a status ≥ 300. */
export async function apiCall(base, token, method, path, body) {
  const headers = { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status}: ${JSON.stringify(json)}`);
  return json.data ?? json;
}
