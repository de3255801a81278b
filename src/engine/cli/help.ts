// The runner's --help: what it does, every option, examples, the exit codes, the environment it reads and
// where to read more (SPEC §4).
import { DEFAULT_USAGE_URL } from '../budget/usage.js';
import { AGENT_NAMES } from '../loop-options.js';
import { loopCommand as loopAsStarted, ralphkitCommand as ralphkitAsStarted } from '../../util/invocation.js';

/** How the help names ralphkit and the engine's own subcommands: as this process was started, unless told. */
export interface HelpCommands {
  ralphkit: (args: string) => string;
  loop: (args: string) => string;
}

/** The runner's help; docs/options.md is rendered from it with fixed command words (cli/options-doc.ts). */
export function renderRunHelp(say: HelpCommands = { ralphkit: ralphkitAsStarted, loop: loopAsStarted }): string {
  const { loop: loopCommand, ralphkit: ralphkitCommand } = say;
  const sub = (args: string, what: string) =>
    `  ${loopCommand(args).padEnd(49)}${loopCommand(args).length >= 49 ? '  ' : ''}${what}`;
  return `Usage: ./ralph/ralph.sh [options] [max_iterations]
       (same as: node ralph/ralph.mjs run ..., and ralphkit's run command)

Runs a coding agent again and again on ralph/prompt.md, each time with a fresh context, until every story
in ralph/prd.json passes under the runner's own checks, the agent says STUCK, or a limit is reached.
max_iterations defaults to 10; 0 means no cap, until done, stuck or a budget: it needs --max-cost, --max-usage
or --max-duration.

Agent:
  --agent <name>              ${AGENT_NAMES.join('|')} (default claude)
  --agent-cmd '<command>'     any other agent, run with sh -c in the repository root;
                              the prompt goes to its stdin, its stdout is its final message
Files:
  --prd <file>                the plan (default ralph/prd.json; else the original layout's
                              scripts/ralph/prd.json, with its progress.txt); a plan with another
                              name keeps its own log beside it: ralph/api.json logs to ralph/api.progress.txt
  --prompt <file>             the instructions, re-read every iteration (default ralph/prompt.md)
Loops:
  --name <id>                 name this loop (default: generated from the time)
  --resume <id>               continue a stopped loop where it left off
  --resume-last               continue the most recent loop (not a complete one)
  --worktree                  run in a git worktree of its own on the plan's branch, beside the repository
                              (<repo>.ralph-worktrees/<id>): your working tree is left alone, and a loop on
                              another plan can run at the same time (--worktree --prd ralph/other.json).
                              Removed when the run ends (kept, and named, when it holds uncommitted changes);
                              after a crash, status lists it: --resume <id> continues there, cleanup removes it
  --parallel <n>              n workers on one plan (implies --worktree): each story goes to a worker, an agent
                              in a worktree of its own on the branch <branchName>--<story id>, once the stories
                              it dependsOn are merged; RALPH_STORY_ID names it. A story verified on its branch
                              waits in a merge queue; the stories waiting are merged onto the plan's branch
                              together and verified again there once (their checks and those of every story
                              merged before), a failing batch split in halves; a conflict or a failure sends
                              a story back. A story that fails on a base other stories are moving goes again
                              on the new tip, uncounted. max_iterations, --max-cost and Ctrl-C count for the
                              whole run. Each worker's agent is sandboxed in its worktree, as a single loop's.
                              Not yet with --verify-in-place, --deliver, a reviewer or --wait
Ending:
  --completion-promise <word> the agent ends its final message with <promise>WORD</promise> on a line of
                              its own (default COMPLETE; letters, digits, _ . -); the runner tells the agent
                              in a note before the prompt. The runner still checks every story itself.
Limits:
  --iteration-timeout <d>     kill an agent that runs longer, with its whole process group (default 60m)
  --max-duration <d>          time limit of this invocation (e.g. 5h30m; none by default): no iteration
                              starts once it is up, and an agent still running then is stopped as at
                              --iteration-timeout; what it committed is checked, then exit 1 (status
                              max-duration), like max iterations. --resume-last continues with the same
                              time again. Under a CI job's time limit, leave room for those checks
  --pause <d>                 wait between iterations (default 2s; 0 for none)
  --no-progress-limit <n>     stop after n iterations in a row without progress (default 3)
  --max-cost <usd>            stop when the cost the agent reports adds up to this (a Claude reviewer's
                              runs count too)
  --max-usage <pct>           Claude subscription: refuse to start / stop above this utilisation
  --wait                      with --max-usage: wait for the reset instead of stopping
  --wait-next-session         sleep until the current 5-hour block resets, then start
  --allow-unknown-usage       with --max-usage: run even when usage cannot be read
Verification (checks run in a fresh checkout of the claimed commit, with the tests pinned at the plan commit):
  --check-timeout <d>         time limit of each check command (default 10m)
  --verify-in-place           run the checks in the working tree instead (ignored build output counts);
                              --verify-in-worktree is the old name of the default and still accepted
  --repin                     with --resume: take the pinned tests again from HEAD (accepts their changes)
  --accept-plan-edits         with --resume: accept your own edits to the plan made while the loop was stopped
  --no-weak-check             skip the start-of-run probe that warns about story checks already passing
  --allow-modified-engine     run although ralph/ralph.mjs, ralph.sh or ralph/.ralphkit.json differ from what
                              ralphkit installed (${ralphkitCommand('install --force')} puts them back)
Review (a second opinion before a story counts; instructions in ralph/review.md, yours to edit):
  --review-agent <name>       after a claim passes its checks, this agent (${AGENT_NAMES.join('|')}) reads the
                              story, the diff and the check results in a throwaway clone of the commit, and
                              answers <promise>SHIP</promise> or <promise>REVISE</promise>; anything but one
                              SHIP rejects the claim, with its reasons in the notes and progress.txt
  --review-cmd '<command>'    any other reviewer, run with sh -c in that clone; request on stdin, its stdout
                              is its answer (RALPH_REVIEW=1 in its environment)
  --review-model <model>      the reviewer's model, e.g. --review-agent claude --review-model opus
                              (--model for claude, codex, gemini, opencode; amp has none; with
                              --review-cmd only recorded, as RALPH_REVIEW_MODEL)
                              A story with "review": false in prd.json is not reviewed; "review": true
                              without a reviewer refuses the start.
Sandbox (Linux, bubblewrap):
  --sandbox, --no-sandbox     the agent under bwrap: the runner's files, .git/hooks, .git/config and the
                              pinned tests read-only, its own PID namespace; checks and the reviewer run
                              under bwrap too, writing only their own checkout. On by default where bwrap
                              can create its namespaces (else the start says so in one line, and what to
                              type); --sandbox refuses to start without it; --no-sandbox turns it off
  --no-network                with the sandbox: no network for the agent (nor its checks and reviewer)
Notifications, when the loop ends (done, max iterations, stuck, no progress, budget, protected, Ctrl-C or
cancel; not on a refusal before the loop is recorded), after its last line. None of them changes the exit
code or holds the runner past its time limit; Ctrl-C stops them (not the one that ended the loop). Give
them again on --resume:
  --notify                    a desktop notification: notify-send on Linux, osascript on macOS (10s)
  --on-exit '<command>'       run it with sh -c in the repository root (30s, then its process group is
                              stopped; the last 4 KiB of its output is shown), with RALPH_EXIT_CODE,
                              RALPH_STATUS (as in state.json), RALPH_LOOP_ID, RALPH_STORIES_PASSED,
                              RALPH_STORIES_TOTAL and RALPH_COST_USD (empty when the agent reports none)
  --webhook <url>             POST {"text": "<summary>"} as JSON (10s): a Slack or Mattermost incoming
                              webhook URL, or a Discord one with /slack added at its end. The URL is a
                              secret: never printed, stored or given to the agent; but an argument
                              shows in ps to other local processes: set RALPH_WEBHOOK_URL instead
Delivery:
  --deliver <mode>            commit, push, pr or pr-merge. commit (default): the plan branch stays
                              local. push: also push it under its own name (to its upstream's
                              remote, else origin; never forced, no hooks run) after each iteration
                              in which a story was accepted, and at the end (not after Ctrl-C,
                              cancel or a stop to protect work). pr: push, then open one pull request
                              to the plan's baseBranch (else the repository's default branch), or
                              update its body: each story's verdict, checks and commit,
                              and the pinned test files the branch changed. Over GitHub's REST API at
                              GITHUB_API_URL (default api.github.com) with GH_TOKEN/GITHUB_TOKEN
                              (GH_ENTERPRISE_TOKEN for other hosts), else "gh auth token"; the token is
                              never printed, stored or given to the agent. A failed push or pull
                              request is one warning: the commits stay, the exit code is unchanged.
                              pr-merge: as pr, then, when the loop is done (exit 0) with every story
                              verified by a check, wait for the repository's own CI on the head the
                              final gate verified and merge the pull request at exactly that sha (a
                              push that raced in makes GitHub refuse). Not merged, exit 7: a story
                              unverified, the loop's commits changed pinned test files, CI failed,
                              no checks reported (that is not a pass), the timeout, or GitHub
                              refused; the pull request stays open. Never after Ctrl-C, cancel,
                              a refusal or a stop to protect work. --resume keeps off and pr;
                              pr-merge must be typed again (a resume never merges on state.json's word)
  --merge-timeout <duration>  pr-merge: how long to wait for CI (default 60m); it is polled every
                              fortieth of this (at least 250ms, at most 30s). Ctrl-C while waiting
                              stops (exit 130) and leaves the pull request open
  --accept-pin-changes        pr-merge: you reviewed the branch's changes to pinned tests (listed in the
                              pull request) and accept them: merge anyway (a --repin never does; CI
                              configuration changes still stop it). Typed each time, never stored
Output:
  --json                      one JSON event per line on stdout; human logs stay on stderr
  --dry-run                   print the agent command (warning when its program is not found),
                              the reviewer's command, the limits and usage now, then exit 0
  -h, --help                  this help

Durations: 500ms, 90s, 10m, 2h, 1h30m, or a number of seconds.

Before iteration 1 the runner refuses a working tree with uncommitted changes (ralph/prd.json, progress.txt
and ralph/archive/ excepted: it commits those), checks out branchName (created from baseBranch when missing)
with the plan you started it with, and verifies stories that already say passes: true. Before exit 0 a final
gate runs every check once more on a fresh checkout of the final commit.

Retries (not counted as iterations):
  A run that fails transiently ("No messages returned", API overloaded/529, or "API Error" or no final
  message with a non-zero exit) is retried up to 3 times, waiting 10s, 20s, then 40s; a reviewer's too.
  A rate-limit or usage-limit message from the agent: the runner waits until the reset it names (or backs
  off from 60s, doubling, at most 12h) and repeats the same iteration; the 25th hit ends the loop with 5.

Examples:
  ./ralph/ralph.sh                                   up to 10 iterations with Claude Code
  ./ralph/ralph.sh --agent codex 25                  up to 25 iterations with Codex
  ./ralph/ralph.sh --agent-cmd 'my-agent --yes' 5    any agent that reads a prompt on stdin
  ./ralph/ralph.sh --max-usage 80 --wait             stay under 80% of the subscription, waiting for resets
  ./ralph/ralph.sh --max-cost 20 0                   no iteration cap: until done, stuck, or $20 spent
  ./ralph/ralph.sh --resume-last 20                  continue the last loop, now up to 20 iterations
  ./ralph/ralph.sh --agent codex --review-agent claude   Codex implements, Claude Code reviews each story
  ./ralph/ralph.sh --worktree --prd ralph/api.json   a second plan in its own worktree, beside a running loop
${sub('validate', 'check ralph/prd.json (or a plan you name) first')}
${sub('status', 'list loops')}
${sub('cancel <id>', 'stop one')}
${sub('cleanup', 'remove the worktrees crashed --worktree loops left')}

Exit codes:
  0    every check of every story passes on the final commit, with the pinned tests
       (stories the plan sets aside with "skip": true are not worked on and not counted)
  1    max iterations reached or --max-duration's time up (or bad usage, or an error such as a runner
       file it cannot write)
  2    refused, nothing changed: the plan missing, invalid (also between iterations) or still the
       example; the prompt missing; not a git repository; a baseBranch or branch it cannot check out;
       another live loop on this plan or in this working tree; uncommitted changes; a modified engine;
       the agent not found (--agent-cmd: its command not found in iteration 1), or under the sandbox
       in a place the sandbox does not show (/tmp); --sandbox without bubblewrap; usage over the ceiling or unknown; ralph/.runs/ not writable; a --name already
       taken; max_iterations 0 without --max-cost, --max-usage or --max-duration; on resume: no loop to continue (none,
       the last one complete, one still running or out of iterations), plan edits without
       --accept-plan-edits, lost pins without --repin; "review": true with no reviewer, or a
       reviewer without ralph/review.md
  3    the agent said <promise>STUCK</promise>
  4    no progress: --no-progress-limit iterations in a row with nothing accepted and no new work committed
  5    budget reached mid-run (cost or usage)
  6    stopped to protect work: the agent rewrote the history of the plan's branch, or the runner
       cannot switch back to that branch, or (on resume) the loop's refs under refs/ralphkit/ are
       not what the runner sealed; or the work passed but your branches, tags and other refs, or a
       program of the agent's that npx would run in the tree, could not all be put back as the loop
       found them; the hint says how to look and continue
  7    done but not merged (--deliver pr-merge): every story passed the final gate, but the pull
       request was not merged (see --deliver); it stays open, --resume <id> verifies and tries again
  130  interrupted (Ctrl-C, SIGTERM or cancel); continue with --resume-last

Environment:
  RALPH_<AGENT>_BIN           the agent's binary instead of the name on PATH, e.g.
                              RALPH_CLAUDE_BIN=/opt/claude/bin/claude (likewise RALPH_CODEX_BIN,
                              RALPH_AMP_BIN, RALPH_OPENCODE_BIN, RALPH_GEMINI_BIN)
  RALPH_USAGE_URL             --max-usage: the usage endpoint, for proxies and tests
                              (default ${DEFAULT_USAGE_URL})
  RALPH_USAGE_TOKEN           --max-usage: the token to read it with (default: the one Claude Code stores;
                              never printed)
  RALPH_RETRY_MS              replaces both retry back-off bases (10s and 60s), in milliseconds
  IS_SANDBOX=1                Claude Code as root: needed for --dangerously-skip-permissions (sandboxes only)

Runtime files: ralph/.runs/<id>/ (state.json, iteration-N.log, ledger.jsonl). After a stop, read
ralph/progress.txt and the last iteration-N.log; ${loopCommand('status')} lists the loops.
Docs: https://www.npmjs.com/package/ralphkit (README: verification, budgets, exit codes, agents).
`;
}
