import { describe, expect, it } from 'vitest';
import { addStopHook, removeStopHook, STOP_HOOK_COMMAND, valueEnd } from '../../../src/install/claude-settings.js';
import { RalphkitError } from '../../../src/errors.js';

const FILE = '/repo/.claude/settings.json';
const OTHER_STOP = { hooks: [{ type: 'command', command: 'say done' }] };

// Settings files as people have them: each must come back byte for byte after the hook goes in and out again.
const USER_FILES: [string, string][] = [
  ['keys only', `{\n  "model": "opus",\n  "permissions": { "allow": ["Bash(npm test)"] }\n}\n`],
  [
    'other hooks, no Stop',
    `{\n  "hooks": {\n    "PreToolUse": [{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "guard.sh" }] }]\n  },\n  "env": { "A": "1" }\n}\n`,
  ],
  ['another Stop hook', JSON.stringify({ hooks: { Stop: [OTHER_STOP] }, theme: 'dark' }, null, 2) + '\n'],
  ['an empty object', '{}'],
  ['an empty object with space inside', '{ \n }\n'],
  ['empty hooks', `{\n  "hooks": {}\n}\n`],
  ['an empty Stop array', `{\n  "hooks": { "Stop": [  ] }\n}`],
  ['CRLF and four spaces', '{\r\n    "model": "opus",\r\n    "hooks": {\r\n        "Stop": []\r\n    }\r\n}\r\n'],
  ['tabs', '{\n\t"model": "opus"\n}\n'],
  ['one line', '{"model":"opus","hooks":{"Stop":[{"hooks":[{"type":"command","command":"x"}]}]}}'],
  ['a byte order mark', '\uFEFF{\n  "a": 1\n}\n'],
  ['no newline at the end, odd spacing', '{ "a" : [1, 2] ,"b":"}\\"]" }'],
  ['a duplicate hooks key (the last one counts)', '{"hooks": {"Stop": 3}, "hooks": {}}'],
];

describe('addStopHook and removeStopHook', () => {
  it.each(USER_FILES)('give back the user file with %s byte for byte', (_name, text) => {
    const added = addStopHook(text, FILE);

    expect(added.text).not.toBe(text);
    const parsed = JSON.parse(added.text.replace(/^\uFEFF/, ''));
    expect(parsed.hooks.Stop.at(-1).hooks[0].command).toBe(STOP_HOOK_COMMAND);
    expect(removeStopHook(added.text, added.record!, FILE)).toBe(text);
  });

  it.each(USER_FILES)('keep every key and hook of the user file with %s', (_name, text) => {
    const before = JSON.parse(text.replace(/^\uFEFF/, ''));
    const after = JSON.parse(addStopHook(text, FILE).text.replace(/^\uFEFF/, ''));
    const { hooks: hooksBefore = {}, ...restBefore } = before;
    const { hooks: hooksAfter, ...restAfter } = after;
    expect(restAfter).toEqual(restBefore);
    const { Stop: stopBefore = [], ...otherEventsBefore } = hooksBefore;
    const { Stop: stopAfter, ...otherEventsAfter } = hooksAfter;
    expect(otherEventsAfter).toEqual(otherEventsBefore);
    expect(stopAfter.slice(0, -1)).toEqual(stopBefore);
  });

  it('follow the indentation and newlines of the file', () => {
    const { text } = addStopHook('{\r\n    "model": "opus"\r\n}\r\n', FILE);

    expect(text).toBe(
      '{\r\n    "model": "opus",\r\n    "hooks": {\r\n        "Stop": [\r\n            {\r\n                "hooks": [\r\n                    {\r\n' +
        '                        "type": "command",\r\n                        "command": "node \\"$CLAUDE_PROJECT_DIR/ralph/ralph.mjs\\" hook stop",\r\n' +
        '                        "timeout": 600\r\n                    }\r\n                ]\r\n            }\r\n        ]\r\n    }\r\n}\r\n',
    );
  });

  it('are idempotent: adding again changes nothing, and an older entry of ours is brought up to date in place', () => {
    const once = addStopHook(`{\n  "model": "opus"\n}\n`, FILE);
    expect(addStopHook(once.text, FILE)).toEqual({ text: once.text });

    const old = once.text
      .replace('"timeout": 600', '"timeout": 30')
      .replace('ralph.mjs\\" hook stop', 'ralph.mjs\\"  hook  stop');
    expect(addStopHook(old, FILE)).toEqual({ text: once.text });
  });

  it('create the file when there is none, and ask for it to be deleted when nothing else went in', () => {
    const added = addStopHook(undefined, FILE);
    expect(added.record).toEqual({ added: 'file' });
    expect(removeStopHook(added.text, added.record!, FILE)).toBeNull();

    const edited = added.text.replace('{\n  "hooks"', '{\n  "model": "opus",\n  "hooks"');
    expect(JSON.parse(removeStopHook(edited, added.record!, FILE)!)).toEqual({ model: 'opus' });
  });

  it('take out only the entry when the user added to what install created around it', () => {
    const added = addStopHook(`{\n  "model": "opus"\n}\n`, FILE);
    expect(added.record).toEqual({ added: 'hooks' });
    const withMore = JSON.stringify(
      { ...JSON.parse(added.text), hooks: { ...JSON.parse(added.text).hooks, PreToolUse: [] } },
      null,
      2,
    );

    expect(JSON.parse(removeStopHook(withMore, added.record!, FILE)!)).toEqual({
      model: 'opus',
      hooks: { PreToolUse: [] },
    });
  });

  it('take out our entry and nothing else when the user edited around it, and leave a file without it alone', () => {
    const added = addStopHook(JSON.stringify({ hooks: { Stop: [OTHER_STOP] } }, null, 2), FILE);
    const reordered = JSON.stringify(
      { hooks: { Stop: [JSON.parse(added.text).hooks.Stop[1], OTHER_STOP, OTHER_STOP] }, model: 'x' },
      null,
      2,
    );

    expect(JSON.parse(removeStopHook(reordered, added.record!, FILE)!)).toEqual({
      hooks: { Stop: [OTHER_STOP, OTHER_STOP] },
      model: 'x',
    });
    expect(removeStopHook('{ "a": 1 }', { added: 'entry' }, FILE)).toBe('{ "a": 1 }');
  });

  it.each([
    ['{\n  "model": "opus",\n}\n', `${FILE}:2:18: trailing comma before '}'; remove it`],
    ['{\n  // comment\n}', `${FILE}:2:3: comments are not allowed in JSON`],
    ['', `${FILE}:1:1: the file is empty; expected a JSON object`],
    ['[]', `${FILE} is an array, where Claude Code expects an object`],
    ['{"hooks": []}', `"hooks" in ${FILE} is an array, where Claude Code expects an object`],
    ['{"hooks": {"Stop": {}}}', `"hooks"."Stop" in ${FILE} is an object, where Claude Code expects an array`],
  ])('refuse settings that are not what Claude Code reads, naming the file and the place: %j', (text, message) => {
    const error = (() => {
      try {
        addStopHook(text, FILE);
      } catch (err) {
        return err as RalphkitError;
      }
    })();
    expect(error).toBeInstanceOf(RalphkitError);
    expect(error!.message).toBe(`cannot add or remove ralphkit's Stop hook: ${message}; nothing was written`);
    expect(error!.exitCode).toBe(2);
  });
});

describe('valueEnd', () => {
  it.each([
    ['"a\\"b" ,', 0, 6],
    ['{"a": "}"} x', 0, 10],
    ['[1, [2], {"b": "]"}]', 0, 20],
    ['  true, 1', 2, 6],
    ['-1.5e3}', 0, 6],
  ])('finds the end of the value in %j', (text, start, end) => {
    expect(valueEnd(text, start)).toBe(end);
  });
});
