import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { completionWordProblem, detectTag, hasTagLine, renderTag } from '../../../../src/engine/core/tags.js';

const TAGS = { complete: renderTag('COMPLETE'), stuck: renderTag('STUCK') };
import { ROOT } from '../../../support/repo.js';

// The shipped prompt, read once: it is a template, not something the test writes.
const PROMPT = readFileSync(path.join(ROOT, 'templates/ralph/prompt.md'), 'utf8');

describe('templates/ralph/prompt.md and the completion detector', () => {
  it('holds no completion or stuck tag on a line of its own, so echoing the prompt ends nothing', () => {
    expect(detectTag(PROMPT)).toBeNull();
    expect(hasTagLine(PROMPT, 'COMPLETE')).toBe(false);
    expect(hasTagLine(PROMPT, 'STUCK')).toBe(false);
  });

  it('does name both tags, inside sentences (so the check above has something to miss)', () => {
    const lines = PROMPT.split(/\r?\n/);
    for (const tag of [TAGS.complete, TAGS.stuck]) {
      const line = lines.find((l) => l.includes(tag));
      expect(line, tag).toBeDefined();
      expect(line!.trim()).not.toBe(tag);
    }
  });

  // The same prompt with one tag moved onto its own line must be caught, or the test above proves nothing.
  it.each([
    ['complete', TAGS.complete],
    ['stuck', TAGS.stuck],
  ] as const)('would catch a %s tag standing alone in the prompt', (name, tag) => {
    expect(detectTag(`${PROMPT}\n  ${tag}  \n`)).toBe(name);
    expect(detectTag(PROMPT.replace(`only ${tag} and nothing else`, `only\n${tag}\nand nothing else`))).toBe(name);
  });
});

describe("a completion word of the loop's own (--completion-promise)", () => {
  it.each([
    ['done\n<promise>WORK_COMPLETE</promise>', 'complete'],
    // The default tag is not the loop's word: it ends nothing.
    ['done\n<promise>COMPLETE</promise>', null],
    ['say <promise>WORK_COMPLETE</promise> when done', null],
    ['<promise>WORK_COMPLETE</promise>\n<promise>STUCK</promise>', 'stuck'],
  ])('%j → %s', (text, tag) => {
    expect(detectTag(text, 'WORK_COMPLETE')).toBe(tag);
  });

  it.each([
    ['WORK_COMPLETE', null],
    ['done.v2-final', null],
    ['STUCK', /STUCK is the tag an agent gives up with/],
    ['stuck', /STUCK is the tag/],
    ['', /use letters, digits/],
    ['</promise>', /use letters, digits/],
    ['two words', /use letters, digits/],
    ['-dash', /use letters, digits/],
    ['A'.repeat(65), /at most 64/],
    ['DONE\nX', /use letters, digits/],
  ])('%j → %s', (word, problem) => {
    const found = completionWordProblem(word);
    if (problem === null) expect(found).toBeNull();
    else expect(found).toMatch(problem);
  });
});

describe('templates/ralph/prompt.md tells the agent the whole routine', () => {
  it.each([
    ['reads the patterns first', /`## Codebase Patterns` section of `ralph\/progress\.txt`, then/],
    ['reads the plan', /`ralph\/prd\.json`/],
    ['works on the plan branch', /`branchName`/],
    ['picks by passes and dependsOn', /`passes: false` whose `dependsOn` stories all have\s+`passes: true`/],
    ['explains priority order', /highest priority, which is the lowest `priority`\s+number/],
    ['reads notes of a rejected attempt', /Read that story's `notes`/],
    ['does one story only', /Implement that story and nothing else/],
    ['runs the plan checks and the story checks', /plan's `checks`, then every command in the story's `checks`/],
    ['verifies UI in a browser', /open it in a browser/],
    ['warns that the runner re-runs checks', /runner re-runs the checks itself/],
    [
      'says rejected claims are reverted with a reason',
      /sets `passes` back to `false` and writes the reason in `notes`/,
    ],
    ['appends learnings to progress', /Learnings: what the next session should know/],
    ['promotes general learnings', /under `## Codebase Patterns`/],
    ['keeps AGENTS.md for lasting knowledge', /AGENTS\.md or CLAUDE\.md[\s\S]*Lasting knowledge\s+only/],
    ['commits with the message format', /`feat: <id> - <title>`/],
    ['commits only when checks pass', /only when every check passes/],
    ['sets passes true', /set `passes: true` on your story/],
    ['reports completion', /every story in `ralph\/prd\.json` that is not set aside now has `passes: true`/],
    [
      'never works on a story set aside',
      /A story set aside \(`"skip": true`, or `passes`\s+"cancelled" or "skipped"\) is never a candidate/,
    ],
    ['writes why it is stuck and commits', /write what blocks\s+you[\s\S]*commit that/],
  ])('%s', (_what, pattern) => {
    expect(PROMPT).toMatch(pattern);
  });
});
