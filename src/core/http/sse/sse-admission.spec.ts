import { SseAdmission, StreamLimitError, streamOwnerOf } from './sse-admission';

describe('SseAdmission', () => {
  it('caps each owner and the process, and a release (once, however often called) frees the slot', () => {
    const admission = new SseAdmission({ perKey: 2, total: 3 });
    const a1 = admission.admit('a');
    admission.admit('a');
    expect(() => admission.admit('a')).toThrow(StreamLimitError);
    admission.admit('b');
    const full = (() => {
      try {
        admission.admit('c');
      } catch (err) {
        return err as StreamLimitError;
      }
    })();
    expect(full).toMatchObject({ status: 429, type: 'stream_limit_exceeded', details: { limit_scope: 'process', limit: 3 }, headers: { 'retry-after': '5' } });
    a1();
    a1();
    expect(admission.openStreams).toBe(2);
    admission.admit('c');
    expect(() => admission.admit('d')).toThrow(/limit 3/);
  });

  it('0 means no cap', () => {
    const admission = new SseAdmission({ perKey: 0, total: 0 });
    for (let i = 0; i < 1000; i++) admission.admit('a');
    expect(admission.openStreams).toBe(1000);
  });

  it('counts an API key by its id, the operator token and the local operator each as one owner', () => {
    expect(streamOwnerOf({ kind: 'api_key', tenantId: 't', apiKeyId: 'k1', scopes: [] })).toBe('key:k1');
    expect(streamOwnerOf({ kind: 'operator', tenantId: 'default', scopes: [] })).toBe('operator:default');
    expect(streamOwnerOf({ kind: 'local_operator', tenantId: 'default', scopes: [] })).toBe('local_operator:default');
  });
});
