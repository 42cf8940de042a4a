import { busChannels } from './channels';
import { patternToRegExp } from './event-bus.port';

describe('bus channel registry', () => {
  it('keeps the wire names an api and a worker of the same version share', () => {
    const names = {
      eventsRun: busChannels.eventsRun.of('r1').name,
      eventsFeed: busChannels.eventsFeed.name,
      runCancel: busChannels.runCancel.of('r1').name,
      gatewayTraceLookup: busChannels.gatewayTraceLookup.name,
      gatewayTraceReply: busChannels.gatewayTraceReply.of('u1').name,
      pricingChanged: busChannels.pricingChanged.name,
      providersChanged: busChannels.providersChanged.name,
      capabilitiesChanged: busChannels.capabilitiesChanged.name,
      budgetsChanged: busChannels.budgetsChanged.name,
      chatStop: busChannels.chatStop.of('s1').name,
      chatStopped: busChannels.chatStopped.of('s1').name,
      chatSessionChanged: busChannels.chatSessionChanged.name,
      agentChatSession: busChannels.agentChatSession.of('s1').name,
      agentChatCancel: busChannels.agentChatCancel.of('t1').name,
      agentChatApproval: busChannels.agentChatApproval.of('a1').name,
      agentChatAdapterOwner: busChannels.agentChatAdapterOwner.of('w1').name,
      agentChatAdapterControl: busChannels.agentChatAdapterControl.name,
      apiKeyRevoked: busChannels.apiKeyRevoked.name,
      mcpCacheRequest: busChannels.mcpCacheRequest.name,
      mcpCacheReply: busChannels.mcpCacheReply.of('c1').name,
      workerRequest: busChannels.workerRequest.of('w1').name,
      workerRequestInput: busChannels.workerRequestInput.of('w1', 't1').name,
      liveStream: busChannels.liveStream.of('l1').name,
      systemProbe: busChannels.systemProbe.of('k1').name,
    } satisfies Record<keyof typeof busChannels, string>;
    expect(names).toEqual({
      eventsRun: 'events.run.r1',
      eventsFeed: 'events.feed',
      runCancel: 'runs.cancel.r1',
      gatewayTraceLookup: 'gateway.traces.lookup',
      gatewayTraceReply: 'gateway.traces.reply.u1',
      pricingChanged: 'gateway.pricing.changed',
      providersChanged: 'gateway.providers.changed',
      capabilitiesChanged: 'gateway.capabilities.changed',
      budgetsChanged: 'gateway.budgets.changed',
      chatStop: 'chat.stop.s1',
      chatStopped: 'chat.stopped.s1',
      chatSessionChanged: 'chat.session.changed',
      agentChatSession: 'agent_chat.session.s1',
      agentChatCancel: 'agent_chat.cancel.t1',
      agentChatApproval: 'agent_chat.approval.a1',
      agentChatAdapterOwner: 'agent_chat.adapter_owner.w1',
      agentChatAdapterControl: 'agent_chat.adapter_control',
      apiKeyRevoked: 'auth.api_key.revoked',
      mcpCacheRequest: 'mcp.cache.request',
      mcpCacheReply: 'mcp.cache.reply.c1',
      workerRequest: 'worker-request.w1',
      workerRequestInput: 'worker-request.w1.input.t1',
      liveStream: 'live.l1',
      systemProbe: 'system.probe.k1',
    });
  });

  it("a family's pattern matches its members only, and idOf gives the id back", () => {
    const sessions = busChannels.agentChatSession;
    const re = patternToRegExp(sessions.all.name);
    expect(sessions.all.name).toBe('agent_chat.session.*');
    expect(re.test(sessions.of('s1').name)).toBe(true);
    expect(re.test(busChannels.agentChatCancel.of('s1').name)).toBe(false);
    expect(sessions.idOf(sessions.of('a.b').name)).toBe('a.b');
    expect(busChannels.runCancel.all.name).toBe('runs.cancel.*');
    expect(busChannels.runCancel.idOf('runs.cancel.r9')).toBe('r9');
  });
});
