// `install --claude-hook` / `--no-claude-hook` in temp repositories: the Stop hook merged into the user's
// .claude/settings.json and taken out again, recorded in the manifest (SPEC §12).
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInstall, type InstallOptions } from '../../../src/install/run.js';
import { runSkillAdd } from '../../../src/install/skill-add.js';
import { RalphkitError } from '../../../src/errors.js';
import { STOP_HOOK_COMMAND } from '../../../src/install/claude-settings.js';
import { RALPH_LOOP_COMMAND, RALPH_LOOP_COMMAND_PATH } from '../../../src/install/claude-command.js';
import { fakePackage, fakeRepo, read, snapshotTree } from '../../support/fake-package.js';
import { testdir } from '../../support/repo.js';

const SETTINGS = '.claude/settings.json';
// A user's settings with their own keys, another event's hook and another Stop hook, in their own layout.
const USER_SETTINGS = `{
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test)"], "deny": []},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
    },
    "env": {"FOO": "bar"}
}
`;

function install(cwd: string, extra: Partial<InstallOptions> = {}) {
  return runInstall({ cwd, sourceRoot: fakePackage(), ...extra });
}

function itemFor(result: Awaited<ReturnType<typeof runInstall>>, file = SETTINGS) {
  return result.plan.items.find((i) => i.path === file);
}

const manifestOf = (repo: string) => JSON.parse(read(repo, 'ralph/.ralphkit.json'));

describe('install --claude-hook', () => {
  it('merges the Stop hook into the user settings, and --no-claude-hook gives back the same bytes', async () => {
    const repo = fakeRepo({ [SETTINGS]: USER_SETTINGS });

    const added = await install(repo, { claudeHook: true });
    expect(itemFor(added)).toMatchObject({
      action: 'merge',
      class: 'merged',
      reason: "ralphkit's Stop hook added; your settings kept",
    });
    const merged = JSON.parse(read(repo, SETTINGS));
    const original = JSON.parse(USER_SETTINGS);
    expect(merged).toEqual({
      ...original,
      hooks: {
        ...original.hooks,
        Stop: [...original.hooks.Stop, { hooks: [{ type: 'command', command: STOP_HOOK_COMMAND, timeout: 600 }] }],
      },
    });
    expect(manifestOf(repo).claudeHook).toEqual({ added: 'entry' });

    const removed = await install(repo, { claudeHook: false });
    expect(itemFor(removed)?.action).toBe('merge');
    expect(read(repo, SETTINGS)).toBe(USER_SETTINGS);
    expect(manifestOf(repo).claudeHook).toBeUndefined();
  });

  it('is idempotent, and a plain install keeps the recorded hook current', async () => {
    const repo = fakeRepo({ [SETTINGS]: USER_SETTINGS });
    await install(repo, { claudeHook: true });
    const installed = read(repo, SETTINGS);

    expect((await install(repo, { claudeHook: true })).status).toBe('nothing-to-do');
    expect((await install(repo)).status).toBe('nothing-to-do');
    expect(read(repo, SETTINGS)).toBe(installed);

    // An entry an older ralphkit wrote (another timeout, another spelling of the command) is brought up to date.
    writeFileSync(
      path.join(repo, SETTINGS),
      installed
        .replace('"timeout": 600', '"timeout": 60')
        .replace('ralph.mjs\\" hook stop', 'ralph.mjs\\"   hook stop'),
    );
    const upgraded = await install(repo);
    expect(itemFor(upgraded)).toMatchObject({
      action: 'merge',
      reason: "ralphkit's Stop hook brought up to date; your settings kept",
    });
    expect(read(repo, SETTINGS)).toBe(installed);
  });

  it('keeps its record through `skill add`, so the next plain install still keeps the hook current', async () => {
    const repo = fakeRepo({ [SETTINGS]: USER_SETTINGS, 'notes.md': '# My notes\n\nText.\n' });
    await install(repo, { claudeHook: true });
    await runSkillAdd({ cwd: repo, files: [path.join(repo, 'notes.md')] });
    expect(manifestOf(repo).claudeHook).toEqual({ added: 'entry' });
  });

  it('leaves the settings of a repository installed without the hook alone', async () => {
    const repo = fakeRepo({ [SETTINGS]: '{"hooks": {"Stop": []}}' });
    await install(repo);
    const result = await install(repo, { force: true });
    expect(itemFor(result)).toBeUndefined();
    expect(read(repo, SETTINGS)).toBe('{"hooks": {"Stop": []}}');
    expect(manifestOf(repo).claudeHook).toBeUndefined();
  });

  it('creates the settings file when there is none, and takes it away again', async () => {
    const repo = fakeRepo();
    expect(itemFor(await install(repo, { claudeHook: true }))?.action).toBe('create');
    expect(JSON.parse(read(repo, SETTINGS)).hooks.Stop[0].hooks[0].command).toBe(STOP_HOOK_COMMAND);
    expect(manifestOf(repo).claudeHook).toEqual({ added: 'file' });

    expect(itemFor(await install(repo, { claudeHook: false }))?.action).toBe('remove');
    expect(existsSync(path.join(repo, SETTINGS))).toBe(false);
    expect(existsSync(path.join(repo, '.claude/skills/prd/SKILL.md'))).toBe(true);
  });

  it('takes out only its own entry when the user changed the file since', async () => {
    const repo = fakeRepo({ [SETTINGS]: USER_SETTINGS });
    await install(repo, { claudeHook: true });
    const edited = JSON.parse(read(repo, SETTINGS));
    edited.theme = 'dark';
    edited.hooks.Stop.unshift({ hooks: [{ type: 'command', command: 'echo first' }] });
    writeFileSync(path.join(repo, SETTINGS), JSON.stringify(edited, null, 2));

    await install(repo, { claudeHook: false });
    const original = JSON.parse(USER_SETTINGS);
    expect(JSON.parse(read(repo, SETTINGS))).toEqual({
      ...original,
      theme: 'dark',
      hooks: { ...original.hooks, Stop: [edited.hooks.Stop[0], ...original.hooks.Stop] },
    });
  });

  it('refuses a malformed settings file with its path and position, and writes nothing at all', async () => {
    const bad = '{\n  "model": "opus"\n  "hooks": {}\n}\n';
    const repo = fakeRepo({ [SETTINGS]: bad });
    const before = snapshotTree(repo);

    const error = await install(repo, { claudeHook: true }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(RalphkitError);
    expect((error as RalphkitError).exitCode).toBe(2);
    expect((error as RalphkitError).message).toBe(
      `cannot add or remove ralphkit's Stop hook: ${path.join(repo, SETTINGS)}:3:3: missing ',' before this property; nothing was written`,
    );
    expect((error as RalphkitError).hint).toMatch(/fix the file/);
    expect(snapshotTree(repo)).toEqual(before);
  });

  it('plans without writing under --dry-run', async () => {
    const repo = fakeRepo({ [SETTINGS]: USER_SETTINGS });
    const result = await install(repo, { claudeHook: true, dryRun: true, diff: true });
    expect(result.status).toBe('dry-run');
    expect(result.diffs[SETTINGS]).toContain(
      `\n+                        "command": ${JSON.stringify(STOP_HOOK_COMMAND)},\n`,
    );
    expect(read(repo, SETTINGS)).toBe(USER_SETTINGS);
  });

  it('adds the /ralph-loop command with the hook as a managed file, and --no-claude-hook takes it out', async () => {
    const repo = fakeRepo({ [SETTINGS]: USER_SETTINGS });
    expect(itemFor(await install(repo, { claudeHook: true }), RALPH_LOOP_COMMAND_PATH)).toMatchObject({
      action: 'create',
      class: 'managed',
    });
    expect(read(repo, RALPH_LOOP_COMMAND_PATH)).toBe(RALPH_LOOP_COMMAND);
    expect(manifestOf(repo).files[RALPH_LOOP_COMMAND_PATH]).toMatchObject({ source: 'ralphkit' });
    expect((await install(repo)).status).toBe('nothing-to-do');

    expect(itemFor(await install(repo, { claudeHook: false }), RALPH_LOOP_COMMAND_PATH)?.action).toBe('remove');
    expect(existsSync(path.join(repo, RALPH_LOOP_COMMAND_PATH))).toBe(false);
    expect(manifestOf(repo).files[RALPH_LOOP_COMMAND_PATH]).toBeUndefined();
    expect(read(repo, SETTINGS)).toBe(USER_SETTINGS);
  });

  it.each([
    ['ralphkit created .claude/ and nothing else is in it: .claude/ goes', { skills: false }, {}, []],
    ['the skills are in .claude/skills/: only .claude/commands/ goes', {}, {}, ['.claude/', '.claude/skills/']],
    [
      "the user's own command is beside it: .claude/commands/ stays",
      { skills: false },
      { '.claude/commands/mine.md': 'Mine.\n' },
      ['.claude/', '.claude/commands/', '.claude/commands/mine.md'],
    ],
  ])(
    '--no-claude-hook removes the folders it emptied, never one with anything else in it: %s',
    async (_name, options, files, left) => {
      const repo = fakeRepo(files);
      await install(repo, { ...options, claudeHook: true });
      expect(existsSync(path.join(repo, RALPH_LOOP_COMMAND_PATH))).toBe(true);

      await install(repo, { ...options, claudeHook: false });
      const claude = Object.keys(snapshotTree(repo)).filter(
        (p) => p.startsWith('.claude/') && !/^\.claude\/skills\/./.test(p),
      );
      expect(claude).toEqual(left);
      if (files['.claude/commands/mine.md' as keyof typeof files])
        expect(read(repo, '.claude/commands/mine.md')).toBe('Mine.\n');
    },
  );

  it('a /ralph-loop command the user edited is a conflict when the hook is taken out: nothing written, --force backs it up', async () => {
    const repo = fakeRepo();
    await install(repo, { claudeHook: true });
    const edited = `${RALPH_LOOP_COMMAND}\nMy own line.\n`;
    writeFileSync(path.join(repo, RALPH_LOOP_COMMAND_PATH), edited);

    const refused = await install(repo, { claudeHook: false });
    expect(refused.status).toBe('conflicts');
    expect(itemFor(refused, RALPH_LOOP_COMMAND_PATH)?.action).toBe('conflict');
    expect(read(repo, RALPH_LOOP_COMMAND_PATH)).toBe(edited);
    expect(manifestOf(repo).files[RALPH_LOOP_COMMAND_PATH]).toMatchObject({ source: 'ralphkit' });

    const forced = await install(repo, { claudeHook: false, force: true });
    const item = itemFor(forced, RALPH_LOOP_COMMAND_PATH);
    expect(item?.action).toBe('remove');
    expect(existsSync(path.join(repo, RALPH_LOOP_COMMAND_PATH))).toBe(false);
    expect(read(repo, item!.backup!)).toBe(edited);
    expect(manifestOf(repo).files[RALPH_LOOP_COMMAND_PATH]).toBeUndefined();
  });

  it('refuses a settings file that is a symlink leading out of the repository', async () => {
    const outside = path.join(testdir(), 'settings.json');
    writeFileSync(outside, '{}');
    const repo = fakeRepo();
    mkdirSync(path.join(repo, '.claude'), { recursive: true });
    symlinkSync(outside, path.join(repo, SETTINGS));

    await expect(install(repo, { claudeHook: true })).rejects.toMatchObject({ exitCode: 2 });
    expect(readFileSync(outside, 'utf8')).toBe('{}');
  });
});
