// Runs the checks of one verification pass and records each run in the ledger. Shared commands (the
// plan's `checks`, and `setup` in worktree mode) run once per iteration even when several stories are
// claimed: the tree does not change between claims, so a second run would only cost time.
import { runCheck, type CheckResult } from './checks.js';
import { appendLedger, type CheckLine, type LedgerLine } from './ledger.js';
import { addWorktree, removeWorktree } from './verify-git.js';
import { guardWrite } from './verify-write.js';
import type { VerifyOptions } from './verify.js';

export type CheckScope = CheckLine['scope'];

export class CheckSession {
  private readonly shared = new Map<string, CheckResult>();
  private worktree: string | undefined;
  private setupFailure: CheckResult | undefined;

  constructor(
    private readonly input: VerifyOptions,
    private readonly top: string,
    readonly commit: string | null,
    private readonly now: () => Date,
  ) {}

  /** Where checks run: the repository root, or (worktree mode) a fresh worktree of HEAD after `setup`. */
  async prepare(story: string, setup: string | undefined): Promise<{ cwd: string } | { failed: CheckResult }> {
    if (!this.input.inWorktree) return { cwd: this.top };
    if (!this.worktree) {
      this.worktree = await addWorktree(this.top);
      this.input.log('info', `verifying in a temporary worktree of ${this.commit?.slice(0, 7) ?? 'HEAD'}: ${this.worktree}`);
    }
    if (setup) {
      const r = await this.run(story, 'setup', setup, this.worktree);
      if (!r.ok) this.setupFailure = r;
    }
    return this.setupFailure ? { failed: this.setupFailure } : { cwd: this.worktree };
  }

  /** Runs `command` (or reuses this iteration's run of a shared one) and appends its ledger line for `story`. */
  async run(story: string, scope: CheckScope, command: string, cwd: string): Promise<CheckResult> {
    const key = `${scope}\0${command}`;
    const reused = scope !== 'story' ? this.shared.get(key) : undefined;
    const result = reused ?? (await runCheck({ command, cwd, timeoutMs: this.input.checkTimeoutMs, signal: this.input.signal }));
    if (scope !== 'story') this.shared.set(key, result);
    this.record(checkLine(this, story, scope, result, reused !== undefined));
    const outcome = result.ok ? 'passed' : result.aborted ? 'stopped (the runner is interrupted)' : result.timedOut ? 'timed out' : `exit ${result.exitCode ?? result.signal}`;
    this.input.log('info', `${story}: ${scope === 'setup' ? 'setup' : 'check'} \`${command}\` ${outcome}${reused ? ' (same run as above)' : ''} in ${result.durationMs}ms`);
    return result;
  }

  record(line: LedgerLine): void {
    guardWrite(this.input.ledgerPath, this.input.repoRoot, () => appendLedger(this.input.ledgerPath, [line]));
  }

  base(story: string): { time: string; loop: string; iteration: number; story: string; commit: string | null } {
    return { time: this.now().toISOString(), loop: this.input.loopId, iteration: this.input.iteration, story, commit: this.commit };
  }

  async close(): Promise<void> {
    if (this.worktree) await removeWorktree(this.top, this.worktree);
    this.worktree = undefined;
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
