// The `/ralph-loop` command that `install --claude-hook` adds (SPEC §12): a Claude Code custom command file whose
// `!` line runs `hook start` before the model sees anything, so the loop is recorded whatever the model does; its
// output (the loop's prompt, or why it did not start) becomes the command's text. Measured on Claude Code 2.1.332:
// commands in .claude/commands/ run in `-p` mode, `${CLAUDE_SESSION_ID}` is the session id, `$ARGUMENTS` what
// followed the command, and the `!` line runs in the session's folder (docs/agents.md).
import type { IncomingFile } from './types.js';

export const RALPH_LOOP_COMMAND_PATH = '.claude/commands/ralph-loop.md';

export const RALPH_LOOP_COMMAND = `---
description: Work through ralph/prd.json in this session; ralphkit verifies your claims each time you stop
argument-hint: "[--max-iterations N] [--completion-promise WORD]"
allowed-tools: Bash(node ralph/ralph.mjs hook start:*)
# Managed by ralphkit (install --claude-hook); ralphkit install --no-claude-hook removes it.
---
!\`node ralph/ralph.mjs hook start --session-id "\${CLAUDE_SESSION_ID}" $ARGUMENTS\`

If the lines above say the loop started, begin now with the instructions they give. If they say it did not start, tell the user why and what to type, and do nothing else.
`;

/** The command as a managed file of the install plan; `remove` takes it out again (--no-claude-hook). */
export function ralphLoopCommandFile(remove = false): IncomingFile {
  return {
    path: RALPH_LOOP_COMMAND_PATH,
    class: 'managed',
    source: 'ralphkit',
    content: Buffer.from(RALPH_LOOP_COMMAND, 'utf8'),
    remove,
  };
}
