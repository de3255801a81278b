// The branch, HEAD and branch tips as the runner last read them. git is asked only when the files it answers from
// changed (git/fingerprint.ts), and the read made before an agent runs also answers the loop's headSha and
// readBranchTips that follow it, so an iteration in which nothing moved costs no git process for them.
import { headSha, readBranchTips, readRefs, type RefsSnapshot } from '../git/head.js';
import { fingerprintRefs, sameFingerprint, type Fingerprint, type GitDirs } from '../git/fingerprint.js';

export class RefsView {
  private seen: { fingerprint: Fingerprint; refs: RefsSnapshot } | null = null;
  private held: RefsSnapshot | null = null;
  private heldTips: string[] | null = null;

  /** `dirs` null: no fingerprint (git's folders unknown), so git is asked every time. */
  constructor(
    private readonly repoRoot: string,
    private readonly dirs: GitDirs | null,
  ) {}

  /** The refs now: the last answer while git's files are byte for byte the same, else git's. */
  async read(): Promise<RefsSnapshot> {
    // Taken before git is asked: a change in between is seen by the next comparison.
    const fingerprint = this.dirs ? fingerprintRefs(this.dirs) : null;
    if (this.seen && sameFingerprint(fingerprint, this.seen.fingerprint)) return this.seen.refs;
    const refs = await readRefs(this.repoRoot);
    this.seen = fingerprint === null ? null : { fingerprint, refs };
    return refs;
  }

  /** Keeps `refs` (read before the agent, after the runner's own commits) for the next headSha and branchTips. */
  hold(refs: RefsSnapshot | null): void {
    this.held = refs;
    this.heldTips = null;
  }

  async headSha(): Promise<string | null> {
    const refs = this.held;
    this.held = null;
    this.heldTips = refs?.tips ?? null;
    return refs ? refs.head : headSha(this.repoRoot);
  }

  async branchTips(): Promise<string[]> {
    const tips = this.heldTips;
    this.heldTips = null;
    return tips ?? readBranchTips(this.repoRoot);
  }
}
