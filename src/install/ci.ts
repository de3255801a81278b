// `install --ci github` / `--no-ci`: the GitHub Actions workflow that runs the loop on CI runners, a managed file like the
// runner (templates/github/ralph.yml), and the record the manifest keeps so a plain `install` keeps it current.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { CiProvider, IncomingFile, Manifest } from './types.js';

/** Where each CI system's workflow comes from in the package, and where it goes in the repository. */
export const CI_FILES: Readonly<Record<CiProvider, { from: string; to: string }>> = {
  github: { from: 'templates/github/ralph.yml', to: '.github/workflows/ralph.yml' },
};

export interface CiPlan {
  files: IncomingFile[];
  /** For the next manifest: undefined keeps the previous record, null drops it. */
  record?: CiProvider | null;
}

/**
 * `want`: a provider adds (or keeps current) its workflow, false takes the recorded one out, undefined does what the
 * manifest says: a repository installed with a workflow keeps it up to date, one without is left alone. Only a file
 * ralphkit installed (a manifest entry) is ever taken out; a workflow of the user's own by that name stays.
 */
export function planCi(
  packageRoot: string,
  want: CiProvider | false | undefined,
  manifest: Manifest | undefined,
): CiPlan {
  const provider = want === undefined ? manifest?.ci : want || manifest?.ci;
  if (!provider) return want === false ? { files: [], record: null } : { files: [] };
  const { from, to } = CI_FILES[provider];
  const content = readFileSync(path.join(packageRoot, from));
  if (want !== false) return { files: [{ path: to, class: 'managed', source: 'ralphkit', content }], record: provider };
  const installed = manifest?.files[to]?.source === 'ralphkit';
  const reason = 'taken out (--no-ci): as ralphkit installed it';
  return {
    files: installed ? [{ path: to, class: 'managed', source: 'ralphkit', content, remove: true, reason }] : [],
    record: null,
  };
}

/**
 * What `install --ci github` leaves to the user, printed when it adds the workflow: the workflow pushed, the agent's
 * credential as a secret, the setting that lets the workflow's token open pull requests, and how to start a run.
 */
export function renderCiNextSteps(afterInstall: boolean): string {
  return [
    `\n${afterInstall ? 'Then, for the loop on GitHub Actions' : 'Next, for the loop on GitHub Actions'}:`,
    '  1. commit and push .github/workflows/ralph.yml',
    "  2. add the agent's credential as a repository secret (Settings → Secrets and variables → Actions, or gh secret set NAME):",
    '     ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN (from claude setup-token) for Claude Code, OPENAI_API_KEY for Codex',
    '  3. let it open pull requests: Settings → Actions → General → "Allow GitHub Actions to create and approve pull requests"',
    '     (or a RALPH_GITHUB_TOKEN secret, a token that may; pull requests it opens then trigger your CI too)',
    '  4. start a run: Actions → Ralph loop → Run workflow, or gh workflow run ralph.yml',
  ].join('\n');
}
