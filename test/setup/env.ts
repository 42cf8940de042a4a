// Integration and e2e projects: real Postgres and Redis. Under CI=true a missing service fails the run.
process.env.TEST_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres';
process.env.TEST_REDIS_URL ??= 'redis://127.0.0.1:6379';
