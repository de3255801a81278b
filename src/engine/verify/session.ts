// Runs the checks of one verification pass and records each run in the ledger. Shared commands (the
// plan's `checks`, and `setup`) run once per checkout even when several stories are claimed: the tree does not
// change between claims, so a second run would only cost time. Stories may be run side by side (the final gate):
// checkouts are prepared one at a time, and a shared command asked for twice at once runs once. The sandbox a check
// runs in is check-sandbox.ts.
import { runCheck, type CheckResult } from './checks.js';
import { appendLedger, type CheckLine, type LedgerLine, type VerdictStatus } from '../store/ledger.js';
import { createCheckout, reapplyPins, removeCheckout, type Checkout } from './checkout.js';
import { renderCheckFailure } from './report.js';
import type { Prd, Story } from '../../prd/types.js';
import path from 'node:path';
import { ChecksEnv } from './check-env.js';
import { withCheckoutPath, withRepoVars } from './repo-env.js';
import { loopSetupCache, renderTamperedCache, setUpThroughCache } from './setup-cache.js';
import { stopMarkedProcesses } from '../agents/leftovers.js';
import type { VerifyOptions } from './types.js';
import { RunnerFileError, SealBroken, WorkProtected, guardWrite } from '../errors.js';
import { readHead } from '../git/head.js';
import { apartSandbox, planCheckWrap, sandboxedEnv } from './check-sandbox.js';
import { HeldFiles } from './held-files.js';
import type { ReviewedCheck } from './review-prompt.js';
import { shellQuote } from '../../util/shell-quote.js';

export type CheckScope = CheckLine['scope'];

/** Where a story's checks run, and which pinned files the commit changed (the checkout has the pinned ones). */
export type Prepared = { cwd: string; key: string; pinnedChanges: string[] } | { failed: CheckResult };

/** What running one story's checks (the plan's, then its own) came to; `pinnedChanges` as in Prepared. */
export type StoryRun =
  | { outcome: 'no-checks' }
  | { outcome: 'interrupted' }
  // `scope`: the failing check's, when a check (not setup, not the checkout) failed.
  | { outcome: 'failed'; why: string; check?: CheckResult; scope?: CheckScope; pinnedChanges: string[] }
  | { outcome: 'passed'; count: number; pinnedChanges: string[]; ran: ReviewedCheck[] };

type CheckoutEntry = { checkout: Checkout; setupFailure?: CheckResult; broken?: Error };

/** Which checkout a story's checks run in: one per set of files it may change (its `mayChange`). */
export function checkoutKey(mayChange: readonly string[] = []): string {
  return [...mayChange].sort().join('\0');
}

export class CheckSession {
  // A shared command's run, by checkout, scope and command; a promise, so that a second story asking while it runs
  // waits for that run instead of starting another.
  private readonly shared = new Map<string, Promise<CheckResult>>();
  // prepare() one at a time: two stories must not make two checkouts of one key, and a setup (which renews the
  // checks' HOME) must not run beside a check.
  private preparing: Promise<unknown> = Promise.resolve();
  // Before the first check, once: HEAD's branch read and the plan and the log held.
  private firstCheck: Promise<void> | undefined;
  // When each command this session ran started and ended (ms): whether a failure had company (ranBeside).
  private readonly spans = new Map<CheckResult, { start: number; end: number }>();
  // One checkout per `mayChange` (stories that may change different pinned files see different versions of them).
  private readonly checkouts = new Map<string, CheckoutEntry>();
  // Checks run the agent's code: they get the agent's environment (no runner secrets) and a mark of their own, so
  // that whatever they leave running (a daemon that would rewrite the plan) is stopped when the pass ends.
  // Made with the first check: the mark is fresh per session and only checks get it, so a session that ran none has
  // nothing to look for when it closes.
  private checkEnv: ChecksEnv | null = null;
  // The plan and the log as they were before the first check; put back when the checks are over (held-files.ts).
  private readonly held = new HeldFiles();
  /** Set by close() when code the checks ran changed what the runner trusts (input.guardTrusted): the claims fall. */
  violation: string | undefined;
  /** HEAD's branch before the first check (null: detached); undefined until a check runs. */
  private branch: string | null | undefined;

  constructor(
    private readonly input: VerifyOptions,
    readonly top: string,
    readonly commit: string | null,
    private readonly now: () => Date,
    // The final gate (verify/final-gate.ts): one command runs once per checkout whichever stories name it, and its
    // ledger lines say they are the gate's.
    private readonly gate = false,
  ) {}

  /**
   * Where checks run: a fresh checkout of the claimed commit with the pinned files (but those `mayChange` names) as
   * they were at the plan commit, after `setup`; or the repository root with --verify-in-place (or before any commit).
   */
  prepare(story: string, setup: string | undefined, mayChange: readonly string[] = []): Promise<Prepared> {
    const next = this.preparing.then(() => this.prepareNow(story, setup, mayChange));
    this.preparing = next.catch(() => undefined);
    return next;
  }

  private async prepareNow(story: string, setup: string | undefined, mayChange: readonly string[]): Promise<Prepared> {
    if (this.input.inPlace || this.commit === null) return { cwd: this.top, key: '', pinnedChanges: [] };
    const key = checkoutKey(mayChange);
    let entry = this.checkouts.get(key);
    if (!entry) {
      await this.guardBeforeRunnerGit();
      const checkout = await this.seal(() =>
        createCheckout(this.top, this.commit!, this.input.pins ?? null, mayChange, true),
      );
      entry = { checkout };
      this.checkouts.set(key, entry);
      this.input.log(
        'info',
        `verifying in a fresh checkout of ${this.commit.slice(0, 7)}${this.input.pins ? ` with the tests pinned at ${this.input.pins.commit.slice(0, 7)}` : ''}`,
      );
      if (setup) await this.setUp(story, setup, entry, key, mayChange);
    } else if (setup) {
      // The ledger line of a shared setup is recorded for every story that relied on it.
      await this.run(story, 'setup', setup, entry.checkout.dir, key);
    }
    // A checkout whose pins could not be put back after setup is never checked in, by this story or the next.
    if (entry.broken) throw entry.broken;
    return entry.setupFailure
      ? { failed: entry.setupFailure }
      : { cwd: entry.checkout.dir, key, pinnedChanges: entry.checkout.pinnedChanges };
  }

  /**
   * `setup` in a new checkout: a copy of what the loop's setup cache holds for its key (verify/setup-cache.ts), else
   * run there (and then cached when it may be); either way the pins are put back after it, as after any setup.
   */
  private async setUp(
    story: string,
    setup: string,
    entry: CheckoutEntry,
    where: string,
    mayChange: readonly string[],
  ): Promise<void> {
    const cache = loopSetupCache(this.top, this.input.loopId);
    const dir = entry.checkout.dir;
    const uncached = await setUpThroughCache(cache, setup, entry.checkout, {
      run: () => this.run(story, 'setup', setup, dir, where),
      settle: async (r) => {
        this.checkEnv?.renew();
        if (!r.ok) entry.setupFailure = r;
        else await this.reseal(entry, mayChange);
      },
      runApart: (apart) => this.runApart(setup, apart),
      copied: async (made, ms, built) => {
        const names = made.names.join(', ');
        this.input.log(
          'info',
          built
            ? `${story}: setup \`${setup}\` passed in ${made.result.durationMs}ms where the loop's setup is built (the lockfiles and package.json files only); ${names} copied in ${ms - made.result.durationMs}ms`
            : `${story}: setup \`${setup}\` not run again: ${names} copied from the loop's setup (same lockfiles) in ${ms}ms`,
        );
        // Its ledger line is the run that built the copy: a run of this checkout's where it built it, else marked
        // shared, as for a second story in one checkout.
        this.shared.set(`${where}\0setup\0${setup}`, Promise.resolve(made.result));
        this.record({
          ...checkLine(this, story, 'setup', made.result, !built),
          ...(this.gate ? { gate: true } : {}),
        });
        // A new checkout's checks get a fresh HOME, as after a setup that ran: nothing an earlier checkout's checks wrote.
        this.checkEnv?.renew();
        await this.reseal(entry, mayChange);
      },
      tampered: (made) => this.input.log('warn', renderTamperedCache(made)),
    });
    if (uncached && cache.firstSaid(uncached))
      this.input.log('info', `setup runs in every verification checkout: ${uncached}`);
  }

  /** After setup: the pins put back from the runner's copy, and the checkout refused if setup broke its seal. */
  private async reseal(entry: CheckoutEntry, mayChange: readonly string[]): Promise<void> {
    try {
      await this.guardBeforeRunnerGit();
      const again = await this.seal(() => reapplyPins(entry.checkout, this.input.pins ?? null, mayChange));
      if (again.length)
        this.input.log('warn', `setup changed pinned test inputs (${again.join(', ')}); put back before the checks`);
      entry.checkout.pinnedChanges = [...new Set([...entry.checkout.pinnedChanges, ...again])];
    } catch (err) {
      entry.broken = err as Error;
    }
  }

  /** Runs `work`; a checkout that cannot be trusted (SealBroken) is said in the output before it rejects the claims. */
  private async seal<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (err instanceof SealBroken) this.input.log('warn', err.message);
      throw err;
    }
  }

  /**
   * Once a check (or setup) has run, the runner's next git command could read what it planted in git's configuration
   * (the user's global file included): the guard puts that back, and a change that runs code rejects the pass. Before
   * a review, what the checks left running is stopped first (it could forge the reviewer's answer); elsewhere it lives
   * until the pass ends, since a setup may start a service the checks use.
   */
  async guardBeforeRunnerGit({ stopLeftovers = false }: { stopLeftovers?: boolean } = {}): Promise<void> {
    if (!this.checkEnv) return;
    if (stopLeftovers) await this.stopLeftovers();
    this.guardTrusted();
  }

  private guardTrusted(): void {
    this.violation = this.input.guardTrusted?.('the checks') ?? this.violation;
  }

  /** What the checks left running (a daemon that would rewrite the plan, or forge the reviewer's answer) is stopped. */
  private async stopLeftovers(): Promise<void> {
    if (!this.checkEnv) return;
    const { stopped } = await stopMarkedProcesses(this.checkEnv.plan.token);
    if (stopped.length)
      this.input.log(
        'warn',
        `stopped ${stopped.length} process${stopped.length === 1 ? '' : 'es'} the checks left running (${stopped
          .slice(0, 5)
          .map((p) => `${p.pid} ${p.command}`)
          .join('; ')})`,
      );
  }

  /**
   * Runs a story's checks, the plan's first, in the checkout its `mayChange` calls for (after setup); stops at the
   * first failure. Shared by a claim's pass (verify.ts) and the final gate (verify/final-gate.ts).
   */
  async runStory(prd: Prd, story: Story): Promise<StoryRun> {
    const checks: Array<[CheckScope, string]> = [
      ...(prd.checks ?? []).map((c): [CheckScope, string] => ['prd', c]),
      ...(story.checks ?? []).map((c): [CheckScope, string] => ['story', c]),
    ];
    if (!checks.length) return { outcome: 'no-checks' };
    let where: Prepared;
    try {
      where = await this.prepare(story.id, prd.setup, story.mayChange ?? []);
    } catch (err) {
      // A full disk says nothing about the work: the loop stops (the claim stays a claim) instead of rejecting it.
      if (err instanceof RunnerFileError && err.diskFull) throw err;
      const why =
        err instanceof SealBroken
          ? err.message
          : `could not prepare a checkout to verify in: ${(err as Error).message}`;
      return { outcome: 'failed', why, pinnedChanges: [] };
    }
    if ('failed' in where) {
      return where.failed.aborted
        ? { outcome: 'interrupted' }
        : {
            outcome: 'failed',
            why: renderCheckFailure(where.failed, this.input.checkTimeoutMs, 'setup'),
            check: where.failed,
            pinnedChanges: [],
          };
    }
    const ran: ReviewedCheck[] = [];
    for (const [scope, command] of checks) {
      const r = await this.run(story.id, scope, command, where.cwd, where.key);
      if (r.aborted) return { outcome: 'interrupted' };
      if (!r.ok)
        return {
          outcome: 'failed',
          why: renderCheckFailure(r, this.input.checkTimeoutMs),
          check: r,
          scope,
          pinnedChanges: where.pinnedChanges,
        };
      ran.push({ scope, command, exitCode: r.exitCode, durationMs: r.durationMs });
    }
    return { outcome: 'passed', count: checks.length, pinnedChanges: where.pinnedChanges, ran };
  }

  /** Runs `command` (or reuses this checkout's run of a shared one) and appends its ledger line for `story`. */
  async run(story: string, scope: CheckScope, command: string, cwd: string, where = ''): Promise<CheckResult> {
    const key = `${where}\0${scope}\0${command}`;
    const shareable = scope !== 'story' || this.gate;
    const checkEnv = await this.beforeCommand();
    // Looked up after the wait, with no await until it is set: a second asker finds the first one's run.
    const earlier = shareable ? this.shared.get(key) : undefined;
    const reused = earlier !== undefined;
    let running = earlier;
    if (!running) {
      const start = Date.now();
      const wrap = planCheckWrap(this.input.sandbox, cwd, this.top, checkEnv.env);
      running = runCheck({
        command,
        cwd,
        env: sandboxedEnv(withCheckoutPath(checkEnv.env, this.input.checkBase, cwd), wrap),
        timeoutMs: this.input.checkTimeoutMs,
        signal: this.input.signal,
        wrap,
      }).then((r) => {
        this.spans.set(r, { start, end: Date.now() });
        return r;
      });
      if (shareable) this.shared.set(key, running);
    }
    const result = await running;
    this.record({
      ...checkLine(this, story, scope, result, reused),
      ...(this.gate ? { gate: true } : {}),
    });
    // A shared setup is said once, where it ran (the ledger has a line for every story that relied on it).
    if (reused && scope === 'setup') return result;
    const outcome = result.ok
      ? 'passed'
      : result.aborted
        ? 'stopped (the runner is interrupted)'
        : result.timedOut
          ? 'timed out'
          : `exit ${result.exitCode ?? result.signal}`;
    this.input.log(
      'info',
      `${story}: ${scope === 'setup' ? 'setup' : 'check'} \`${command}\` ${outcome}${reused ? ' (same run as above)' : ''} in ${result.durationMs}ms`,
    );
    return result;
  }

  /**
   * Before each command of the agent's code: the checks' environment, made with the first, and before the first,
   * what close() compares HEAD's branch with and the files put back after the checks.
   */
  private async beforeCommand(): Promise<ChecksEnv> {
    const checkEnv = (this.checkEnv ??= new ChecksEnv(this.input.checkBase, this.input.log));
    this.firstCheck ??= readHead(this.top).then(({ branch }) => {
      this.branch = branch;
      this.held.hold([this.input.prdPath, this.input.progressPath]);
    });
    await this.firstCheck;
    return checkEnv;
  }

  /**
   * `setup` where the loop's setup cache is built (`dir`: the key's files only, verify/setup-cache.ts), in the checks'
   * environment and sandbox; its ledger line is written by the checkout it is copied into. The checks get a new HOME.
   */
  private async runApart(setup: string, dir: string): Promise<CheckResult> {
    const checkEnv = await this.beforeCommand();
    const wrap = planCheckWrap(apartSandbox(this.input.sandbox, this.top), dir, this.top, checkEnv.env);
    const r = await runCheck({
      command: setup,
      cwd: dir,
      env: sandboxedEnv(withRepoVars(checkEnv.env, this.input.checkBase, dir), wrap),
      timeoutMs: this.input.checkTimeoutMs,
      signal: this.input.signal,
      wrap,
    });
    checkEnv.renew();
    return r;
  }

  /** True when another command of this session ran while `result`'s did (the final gate's stories side by side). */
  ranBeside(result: CheckResult): boolean {
    const mine = this.spans.get(result);
    if (!mine) return false;
    for (const [other, span] of this.spans)
      if (other !== result && span.start < mine.end && mine.start < span.end) return true;
    return false;
  }

  record(line: LedgerLine): void {
    guardWrite(this.input.ledgerPath, this.input.repoRoot, () => appendLedger(this.input.ledgerPath, [line]));
  }

  /** The ledger line of what was decided about `story` (the final gate's when `gate`), why, and how long it took. */
  recordVerdict(
    story: string,
    status: VerdictStatus,
    { reason, durationMs = 0, gate }: { reason?: string; durationMs?: number; gate?: boolean } = {},
  ): void {
    this.record({
      ...this.base(story),
      kind: 'verdict',
      command: null,
      exitCode: null,
      status,
      ...(reason ? { reason } : {}),
      durationMs,
      outputSha256: null,
      ...(gate ? { gate: true } : {}),
    });
  }

  base(story: string): { time: string; loop: string; iteration: number; story: string; commit: string | null } {
    return {
      time: this.now().toISOString(),
      loop: this.input.loopId,
      iteration: this.input.iteration,
      story,
      commit: this.commit,
    };
  }

  /**
   * The checks ran with the repository in reach: if HEAD is no longer the commit they checked, on the branch it was
   * on, whatever the runner decided would be about another commit or branch than the one it commits to. The loop
   * stops; nothing is moved back for it.
   */
  private async refuseMovedHead(): Promise<void> {
    // One git process for both, named as when they were taken (a branch's name without refs/heads/).
    const { head: now, branch } = await readHead(this.top);
    if (now === this.commit && branch === this.branch) return;
    const where = (b: string | null | undefined, sha: string | null) =>
      `${b ?? 'a detached HEAD'} at ${sha?.slice(0, 7) ?? 'no commit'}`;
    throw new WorkProtected(
      `HEAD moved from ${where(this.branch, this.commit)} to ${where(branch, now)} while the checks ran (code they ran, or someone else, changed the repository): nothing is decided about a commit the branch no longer holds; the loop stops`,
      `look at what changed: git reflog; to undo it: ${this.branch ? `git checkout ${shellQuote(this.branch)} && ` : ''}git reset --hard ${this.commit} (drops uncommitted changes); then continue with: ./ralph/ralph.sh --resume-last`,
    );
  }

  /**
   * After the last check: what the checks left running is stopped, then the plan and the log, the files the runner
   * trusts and HEAD are checked and put back. Every step runs even when one before it failed (a restore that cannot
   * write must not leave a planted filter in place); the first failure is thrown at the end.
   */
  async close(): Promise<void> {
    const failures: unknown[] = [];
    const step = async (work: () => unknown): Promise<void> => {
      try {
        await work();
      } catch (err) {
        failures.push(err);
      }
    };
    const ran = this.checkEnv !== null;
    await step(() => this.stopLeftovers());
    // Only once nothing the checks started is left to write again.
    await step(() => this.restoreHeld());
    if (ran) await step(() => this.guardTrusted());
    if (ran && this.commit !== null) await step(() => this.refuseMovedHead());
    for (const { checkout } of this.checkouts.values()) removeCheckout(checkout.dir);
    this.checkouts.clear();
    this.checkEnv?.remove();
    if (failures.length) throw failures[0];
  }

  private restoreHeld(): void {
    const changed = this.held.restore((file, put) =>
      guardWrite(file, this.input.repoRoot, put, 'a check changed it, and it could not be put back'),
    );
    if (!changed.length) return;
    const names = changed.map((f) => path.relative(this.input.repoRoot, f).split(path.sep).join('/')).join(' and ');
    this.input.log(
      'warn',
      `the checks changed ${names} (code they ran reached the repository); put back as ${changed.length === 1 ? 'it was' : 'they were'} before the checks`,
    );
  }
}

function checkLine(s: CheckSession, story: string, scope: CheckScope, r: CheckResult, shared: boolean): CheckLine {
  return {
    ...s.base(story),
    kind: 'check',
    scope,
    command: r.command,
    exitCode: r.exitCode,
    signal: r.signal,
    timedOut: r.timedOut,
    durationMs: r.durationMs,
    outputSha256: r.outputSha256,
    ...(shared ? { shared: true } : {}),
    ...(r.aborted ? { aborted: true } : {}),
  };
}
