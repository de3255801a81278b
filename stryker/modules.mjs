// The modules `npm run mutate` scores, each with the test files that exercise it (only those run).
// `floor` is the lowest score a later run may report (`npm run mutate -- --floor`); `pure` modules
// are the ones cheap enough to re-check often (no processes, no git); `ci` ones are re-checked by every `npm test`
// (`npm run test:mutation`), so a change that weakens their tests fails the build. The tests of 5,000-story plans and of
// 1,500 random plans (validate-large-plan, validate-fast-path, quick-check) are left out: every mutant of the
// validator and the schema would rerun them, for seconds each; schema.test.ts pins what quick-check's property
// test compares (the fast path's verdict equals the full check's).
export const MODULES = [
  {
    name: 'run/parallel/schedule',
    mutate: 'src/engine/run/parallel/schedule.ts',
    tests: ['test/unit/engine/run/parallel/schedule.test.ts'],
    floor: 100,
    pure: true,
    ci: true,
  },
  {
    name: 'run/parallel/ending',
    mutate: 'src/engine/run/parallel/ending.ts',
    tests: ['test/unit/engine/run/parallel/ending.test.ts'],
    floor: 100,
    pure: true,
    ci: true,
  },
  {
    name: 'install/plan',
    mutate: 'src/install/plan.ts',
    tests: ['test/unit/install/plan.test.ts', 'test/unit/install/plan-manifest.test.ts', 'test/unit/util/diff.test.ts'],
    floor: 100,
    pure: true,
  },
  {
    name: 'prd/validate',
    mutate: 'src/prd/validate.ts',
    tests: [
      'test/unit/prd/validate.test.ts',
      'test/unit/prd/validate-warnings.test.ts',
      'test/unit/prd/validate-edges.test.ts',
    ],
    floor: 99,
    pure: true,
  },
  {
    name: 'prd/schema',
    mutate: 'src/prd/schema.ts',
    tests: [
      'test/unit/prd/schema.test.ts',
      'test/unit/prd/validate.test.ts',
      'test/unit/prd/validate-warnings.test.ts',
      'test/unit/prd/validate-edges.test.ts',
    ],
    floor: 97,
    pure: true,
  },
  {
    name: 'verify/prd-diff',
    mutate: 'src/engine/verify/prd-diff.ts',
    tests: [
      'test/unit/engine/verify/prd-diff.test.ts',
      'test/unit/engine/verify/prd-diff-skip.test.ts',
      'test/unit/engine/verify/prd-diff-edges.test.ts',
    ],
    floor: 95,
    pure: true,
  },
  {
    name: 'verify/pins',
    mutate: 'src/engine/verify/{pins,check-steps,package-pins}.ts',
    tests: [
      'test/unit/engine/verify/pins.test.ts',
      'test/unit/engine/verify/pins-commands.test.ts',
      // planAbsentPaths (the runners' shadows, make targets) is tested with the runner table.
      'test/unit/engine/verify/runner-config.test.ts',
    ],
    // 85.5 % measured 2026-12-07 after planConfigLoads (its long key regex and path resolution leave survivors);
    // 83.4 % once check-steps.ts and package-pins.ts, split out of pins.ts, were scored with it (same tests).
    floor: 83,
    pure: true,
  },
  {
    name: 'verify/agent-run-record',
    mutate: 'src/engine/verify/agent-run-record.ts',
    tests: ['test/integration/engine/verify/agent-run-record.test.ts'],
    // 85.9 % measured 2026-12-07 (git in temp repositories; survivors: the record's shape checks, equivalent regex
    // anchors, a detached HEAD's `here !== null`).
    floor: 85,
  },
  {
    name: 'verify/tool-bins',
    mutate: 'src/engine/verify/tool-bins.ts',
    tests: ['test/integration/engine/verify/tool-bins.test.ts'],
    // 87.4 % measured 2026-12-07 (survivors: equivalent mutants on entries read the same way at both ends, a
    // missing file's 'none' never asked for, a folder where a program was, the walk's depth limit).
    floor: 85,
  },
  {
    name: 'verify/gate-verdict',
    mutate: 'src/engine/verify/gate-verdict.ts',
    tests: ['test/unit/engine/verify/gate-verdict.test.ts'],
    floor: 100,
    pure: true,
    ci: true,
  },
  {
    name: 'core/tags',
    mutate: 'src/engine/core/tags.ts',
    tests: ['test/unit/engine/core/tags.test.ts', 'test/unit/engine/parsers.test.ts'],
    floor: 100,
    pure: true,
    ci: true,
  },
  {
    name: 'core/duration',
    mutate: 'src/engine/core/duration.ts',
    tests: ['test/unit/engine/core/duration.test.ts', 'test/unit/engine/parsers.test.ts'],
    floor: 100,
    pure: true,
    ci: true,
  },
  {
    name: 'store/parallel-notes',
    mutate: 'src/engine/store/parallel-notes.ts',
    tests: ['test/unit/engine/store/parallel-notes.test.ts'],
    floor: 99,
    pure: true,
  },
  {
    name: 'core/loop',
    mutate: 'src/engine/core/loop.ts',
    tests: [
      'test/unit/engine/core/loop.test.ts',
      'test/unit/engine/core/loop-events.test.ts',
      'test/unit/engine/core/loop-resume.test.ts',
      'test/unit/engine/core/loop-deadline.test.ts',
    ],
    floor: 97,
    pure: false,
  },
  {
    name: 'prd/story-ref',
    mutate: 'src/prd/story-ref.ts',
    tests: ['test/unit/prd/story-ref.test.ts'],
    floor: 100,
    pure: true,
  },
  {
    name: 'util/shell-quote',
    mutate: 'src/util/shell-quote.ts',
    tests: ['test/unit/util/shell-quote.test.ts'],
    floor: 100,
    pure: true,
  },
  {
    name: 'util/at-most',
    mutate: 'src/util/at-most.ts',
    tests: ['test/unit/util/at-most.test.ts'],
    floor: 100,
    pure: true,
  },
  {
    name: 'run/parallel/plan-tip',
    mutate: 'src/engine/run/parallel/plan-tip.ts',
    tests: ['test/unit/engine/run/parallel/plan-tip.test.ts'],
    floor: 96,
  },
  {
    name: 'verify/setup-key',
    mutate: 'src/engine/verify/setup-key.ts',
    tests: ['test/unit/engine/verify/setup-key.test.ts', 'test/integration/engine/verify/setup-inputs.test.ts'],
    floor: 94,
  },
  {
    name: 'core/limits',
    mutate: 'src/engine/core/limits.ts',
    tests: ['test/unit/engine/core/limits.test.ts'],
    floor: 98,
    pure: true,
  },
  {
    name: 'git/parse',
    mutate: 'src/engine/git/parse.ts',
    tests: ['test/unit/engine/git/parse.test.ts'],
    floor: 86,
    pure: true,
  },
  {
    name: 'agents/sandbox',
    mutate: 'src/engine/agents/sandbox.ts',
    tests: ['test/unit/engine/agents/sandbox.test.ts', 'test/integration/engine/agents/sandbox.test.ts'],
    floor: 74,
    pure: false,
  },
  {
    name: 'agents/sandbox-home',
    mutate: 'src/engine/agents/sandbox-home.ts',
    tests: ['test/unit/engine/agents/sandbox-home.test.ts'],
    floor: 89,
    pure: true,
  },
  {
    name: 'git/quarantine',
    mutate: 'src/engine/git/quarantine.ts',
    tests: ['test/integration/engine/git/quarantine.test.ts'],
    floor: 78,
    pure: false,
  },
  {
    name: 'run/parallel/stale-base',
    mutate: 'src/engine/run/parallel/stale-base.ts',
    tests: ['test/unit/engine/run/parallel/stale-base.test.ts'],
    floor: 98,
    pure: true,
  },
  {
    name: 'git/objects',
    mutate: 'src/engine/git/objects.ts',
    tests: [
      'test/integration/engine/verify/sealed-checkout.test.ts',
      'test/integration/engine/git/quarantine.test.ts',
      'test/integration/engine/git/hash-path.test.ts',
    ],
    // 70.7 % (128/181) on 2026-12-07; most survivors are equivalent: the ls-tree listing is only a guess of which
    // trees to fetch (a wrong one costs a read level by level), and parseTree's guard against a malformed tree.
    floor: 70,
    pure: false,
  },
  {
    name: 'verify/sealed-checkout',
    mutate: 'src/engine/verify/sealed-checkout.ts',
    tests: ['test/integration/engine/verify/sealed-checkout.test.ts'],
    // 66.1 % (109/165) on 2026-12-07: the survivors are the refusal's wording (how many files it names), and in
    // readAsGitWrote the cases of a claim that changed a pinned file converted on the way out (its pinned bytes go
    // in either way, so only the sealPins check that follows tells them apart).
    floor: 65,
    pure: false,
  },
  {
    name: 'verify/nested-git',
    mutate: 'src/engine/verify/nested-git.ts',
    tests: ['test/integration/engine/verify/nested-git.test.ts'],
    // 62.9 % (161/256) on 2026-12-07 (49.8 % before the tests of a .git file put back, a link and a removed config):
    // survivors are mostly in the reason's wording, statKey's fields, and readHeld's marker for a non-file config.
    floor: 60,
    pure: false,
  },
  {
    name: 'view/memo',
    mutate: 'src/view/memo.ts',
    tests: ['test/integration/view/memo.test.ts'],
    floor: 75,
    pure: false,
  },
];
