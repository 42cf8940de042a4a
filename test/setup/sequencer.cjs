// Jest's own order — suites that failed last time first, then the longest first, so no lane starts a long suite
// near the end — with the durations this checkout's Jest cache has, else those recorded from a whole CI run
// (test/setup/suite-durations.json, written by `node test/setup/record-durations.mjs .ci/jest-results.json`).
// A fresh clone (every CI run) has no cache, and Jest would fall back to ordering by file size.
const { relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;
const recorded = require('./suite-durations.json');

module.exports = class RecordedDurations extends Sequencer {
  time(test) {
    return super.time(test) ?? recorded[relative(test.context.config.rootDir, test.path)];
  }
};
