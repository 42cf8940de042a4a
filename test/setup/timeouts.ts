// Integration and e2e tests start real processes and services; their limits live here (per project).
jest.setTimeout(60_000);
