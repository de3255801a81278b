// --deliver pr-merge: what the branch changed, as GitHub sees it (GET /repos/{o}/{r}/compare/{base}...{head}): the merge
// base of the two (`merge_base_commit.sha`) and the changed files (`files[]`, each `filename`, a `status` of added,
// removed, modified, renamed, ..., and `previous_filename` for a rename). GitHub lists at most 300 files; a list that
// long is taken as cut short, so the caller cannot tell and does not merge. Nothing here comes from the local
// repository, which the agent can write: the merge base is the anchor the loop's own refs cannot move.
import { GitHubError, type GitHubClient, type GitHubRepo } from './github.js';

export interface BranchChanges {
  mergeBase: string;
  /** Every path the branch added, changed or removed (both names of a rename). */
  files: string[];
  /** False when GitHub's list may be cut short. */
  complete: boolean;
}

/** GitHub's cap on the files of one comparison. */
export const COMPARE_FILE_CAP = 300;

/** Reads the comparison of `base` (a branch) and `head` (a sha). Throws GitHubError. */
export async function readBranchChanges(
  client: GitHubClient,
  repo: GitHubRepo,
  base: string,
  head: string,
): Promise<BranchChanges> {
  const spec = `${base.split('/').map(encodeURIComponent).join('/')}...${encodeURIComponent(head)}`;
  const answer = await client.request(
    'GET',
    `/repos/${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.repo)}/compare/${spec}`,
  );
  const body = answer.body as { merge_base_commit?: { sha?: unknown }; files?: unknown } | null;
  const mergeBase = body?.merge_base_commit?.sha;
  if (typeof mergeBase !== 'string' || !/^[0-9a-f]{40}$/.test(mergeBase) || !Array.isArray(body?.files)) {
    throw new GitHubError(
      "GitHub's comparison of the branch with its base named no merge base or no files",
      answer.status,
    );
  }
  const files = new Set<string>();
  for (const f of body.files as Array<{ filename?: unknown; previous_filename?: unknown }>) {
    for (const name of [f?.filename, f?.previous_filename]) if (typeof name === 'string' && name) files.add(name);
  }
  return { mergeBase, files: [...files], complete: body.files.length < COMPARE_FILE_CAP };
}

// What decides which CI runs and what it does: a branch that changes these could make the repository's CI a pass.
const CI_CONFIG: readonly RegExp[] = [
  /^\.github\/workflows\//,
  /^\.github\/actions\//,
  /^\.gitlab-ci\.yml$/,
  /^\.circleci\//,
  /^azure-pipelines\.yml$/,
  /^Jenkinsfile$/,
  /^\.buildkite\//,
];

/** Pure: the paths among `files` that configure CI. */
export function ciConfigFiles(files: readonly string[]): string[] {
  return files.filter((f) => CI_CONFIG.some((re) => re.test(f)));
}
