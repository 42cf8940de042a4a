import { PlatformFoundation1763800000000 } from './1763800000000-PlatformFoundation';
import { GatewayProviders1795345195856 } from './1795345195856-GatewayProviders';
import { ChatSessions1795345703807 } from './1795345703807-ChatSessions';
import { TaskRuntime1795346724457 } from './1795346724457-TaskRuntime';
import { ChatGenerationLease1795400000000 } from './1795400000000-ChatGenerationLease';
import { AgentChat1795500000000 } from './1795500000000-AgentChat';
import { ExternalAgentSessions1795600000000 } from './1795600000000-ExternalAgentSessions';
import { AgentChatApprovals1795700000000 } from './1795700000000-AgentChatApprovals';
import { AgentSessionKeys1795800000000 } from './1795800000000-AgentSessionKeys';
import { GatewayResponses1795900000000 } from './1795900000000-GatewayResponses';
import { PendingTaskApprovals1795950000000 } from './1795950000000-PendingTaskApprovals';
import { WorkspaceOps1796000000000 } from './1796000000000-WorkspaceOps';
import { FeedStampFunction1796100000000 } from './1796100000000-FeedStampFunction';
import { AssistantPrefillCapability1796200000000 } from './1796200000000-AssistantPrefillCapability';
import { AgentChatMessageSpans1796500000000 } from './1796500000000-AgentChatMessageSpans';
import { SavedAgents1796600000000 } from './1796600000000-SavedAgents';
import { WorkerRequests1796700000000 } from './1796700000000-WorkerRequests';
import { OneApprovalsStore1796800000000 } from './1796800000000-OneApprovalsStore';
import { TaskAgentChat1796900000000 } from './1796900000000-TaskAgentChat';
import { Schedules1797000000000 } from './1797000000000-Schedules';
import { Webhooks1797100000000 } from './1797100000000-Webhooks';
import { Budgets1797200000000 } from './1797200000000-Budgets';
import { TaskClientRef1797300000000 } from './1797300000000-TaskClientRef';

/** Every migration, in order. Add new ones at the end (files: `<epoch>-<PascalName>.ts`). */
export const MIGRATIONS = [
  PlatformFoundation1763800000000,
  GatewayProviders1795345195856,
  ChatSessions1795345703807,
  TaskRuntime1795346724457,
  ChatGenerationLease1795400000000,
  AgentChat1795500000000,
  ExternalAgentSessions1795600000000,
  AgentChatApprovals1795700000000,
  AgentSessionKeys1795800000000,
  GatewayResponses1795900000000,
  PendingTaskApprovals1795950000000,
  WorkspaceOps1796000000000,
  FeedStampFunction1796100000000,
  AssistantPrefillCapability1796200000000,
  AgentChatMessageSpans1796500000000,
  SavedAgents1796600000000,
  WorkerRequests1796700000000,
  OneApprovalsStore1796800000000,
  TaskAgentChat1796900000000,
  Schedules1797000000000,
  Webhooks1797100000000,
  Budgets1797200000000,
  TaskClientRef1797300000000,
];
