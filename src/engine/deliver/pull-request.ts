// --deliver pr: one pull request from the plan branch to its base, opened once and then kept up to date. Looked up
// by head (`GET /pulls?head=owner:branch&state=open`), so a second run, or a push after each story, updates the
// same pull request's body (PATCH) instead of opening another.
import type { Prd } from '../../prd/types.js';
import { runGit } from '../git/git.js';
import { planPinnedPaths } from '../verify/pins.js';
import { ciConfigFiles } from './compare.js';
import { GitHubError, type GitHubClient, type GitHubRepo, parseRemoteUrl } from './github.js';

export interface PullRequestPlan {
  branch: string;
  /** The plan's baseBranch; absent: the repository's default branch, as GitHub names it. */
  base?: string;
  title: string;
  /** The body, once the base is known (it lists the pinned files changed since the base). */
  body: (base: string) => Promise<string>;
}

export interface PullRequestDone {
  action: 'opened' | 'updated';
  number: number;
  url: string;
  base: string;
}

interface PullFields {
  number?: unknown;
  html_url?: unknown;
  base?: { ref?: unknown };
}

/** Finds the open pull request of the branch and updates its body, or opens one. Throws GitHubError. */
export async function openOrUpdatePull(
  client: GitHubClient,
  repo: GitHubRepo,
  plan: PullRequestPlan,
): Promise<PullRequestDone> {
  const root = `/repos/${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.repo)}`;
  const head = `${repo.owner}:${plan.branch}`;
  const list = await client.request('GET', `${root}/pulls?head=${encodeURIComponent(head)}&state=open&per_page=10`);
  // Not a list is not "none open": opening another on every push would follow.
  if (!Array.isArray(list.body))
    throw new GitHubError(
      `GitHub's answer to the list of open pull requests of ${head} is not a list (HTTP ${list.status})`,
      list.status,
    );
  const open = list.body[0] as PullFields | undefined;
  if (open && typeof open.number === 'number') {
    const base = typeof open.base?.ref === 'string' ? open.base.ref : (plan.base ?? '');
    const updated = await client.request('PATCH', `${root}/pulls/${open.number}`, { body: await plan.body(base) });
    return describe('updated', updated.body as PullFields, open, base);
  }
  const base = plan.base ?? (await defaultBranch(client, root));
  const created = await client.request('POST', `${root}/pulls`, {
    title: plan.title,
    head: plan.branch,
    base,
    body: await plan.body(base),
  });
  const fields = created.body as PullFields | null;
  if (typeof fields?.number !== 'number')
    throw new GitHubError(
      `GitHub answered HTTP ${created.status} to opening the pull request without its number: whether it was opened is unknown (look on GitHub)`,
      created.status,
    );
  return describe('opened', fields, {}, base);
}

function describe(
  action: PullRequestDone['action'],
  answer: PullFields,
  known: PullFields,
  base: string,
): PullRequestDone {
  const number = typeof answer?.number === 'number' ? answer.number : Number(known.number ?? 0);
  const url =
    typeof answer?.html_url === 'string' ? answer.html_url : typeof known.html_url === 'string' ? known.html_url : '';
  return { action, number, url, base };
}

/** What GitHub says of pull request `number` now: its base branch, head sha and head repository ("owner/name"). */
export async function readPullFacts(
  client: GitHubClient,
  repo: GitHubRepo,
  number: number,
): Promise<{ base: string; headSha: string; headRepo: string }> {
  const answer = await client.request(
    'GET',
    `/repos/${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.repo)}/pulls/${number}`,
  );
  const body = answer.body as {
    base?: { ref?: unknown };
    head?: { sha?: unknown; repo?: { full_name?: unknown } | null };
  } | null;
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  return { base: text(body?.base?.ref), headSha: text(body?.head?.sha), headRepo: text(body?.head?.repo?.full_name) };
}

/** The repository's default branch, as GitHub names it. Throws GitHubError. */
export function readDefaultBranch(client: GitHubClient, repo: GitHubRepo): Promise<string> {
  return defaultBranch(client, `/repos/${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.repo)}`);
}

async function defaultBranch(client: GitHubClient, root: string): Promise<string> {
  const answer = await client.request('GET', root);
  const name = (answer.body as { default_branch?: unknown } | null)?.default_branch;
  if (typeof name !== 'string' || !name)
    throw new GitHubError("GitHub did not name the repository's default branch", answer.status);
  return name;
}

/**
 * The remote's owner/repo: from the URL git pushes to (insteadOf applied: `gh:acme/demo` may expand to GitHub), else
 * from the URL as configured, when a rewrite sends pushes elsewhere (a mirror, a path). Null when neither names one.
 */
export async function readRemoteRepo(top: string, remote: string): Promise<GitHubRepo | null> {
  const pushed = await runGit(top, ['remote', 'get-url', '--push', '--end-of-options', remote]);
  const fromPush = pushed.code === 0 ? parseRemoteUrl(pushed.stdout) : null;
  if (fromPush) return fromPush;
  const configured = await runGit(top, ['config', '--get', `remote.${remote}.url`]);
  return configured.code === 0 ? parseRemoteUrl(configured.stdout) : null;
}

/**
 * The pinned files (the plan's test paths, `protect`, files its checks name) the branch changed since it left its
 * base, as "M test/a.test.ts" lines (from `git diff --name-status`); null when no base is known here.
 */
export async function readPinnedChanges(
  top: string,
  prd: Prd,
  branch: string,
  base: string,
  remote: string,
): Promise<string[] | null> {
  return changedAmong(await readBaseDiff(top, branch, base, remote), (paths) => planPinnedPaths(paths, prd));
}

/** The CI configuration files (.github/workflows/**, ...) the branch changed since it left its base; null: no base here. */
export async function readCiChanges(
  top: string,
  branch: string,
  base: string,
  remote: string,
): Promise<string[] | null> {
  return changedAmong(await readBaseDiff(top, branch, base, remote), ciConfigFiles);
}

/** The `--name-status` rows whose path `pick` keeps, as "M path" lines; null when there was no diff to read. */
function changedAmong(rows: string[][] | null, pick: (paths: string[]) => string[]): string[] | null {
  if (!rows) return null;
  const kept = new Set(pick(rows.map((row) => row[1] ?? '')));
  return rows.filter((row) => kept.has(row[1] ?? '')).map((row) => `${row[0]} ${row[1]}`);
}

async function readBaseDiff(top: string, branch: string, base: string, remote: string): Promise<string[][] | null> {
  if (!base) return null;
  for (const ref of [`refs/heads/${base}`, `refs/remotes/${remote}/${base}`]) {
    const r = await runGit(top, [
      'diff',
      '--no-renames',
      '--name-status',
      '--no-ext-diff',
      `${ref}...refs/heads/${branch}`,
      '--',
    ]);
    if (r.code === 0)
      return r.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t'));
  }
  return null;
}
