// The agent's sandbox as a wall (issue #26), with the real bubblewrap and real git, in-process: sandboxCommand's
// command line run as the agent would be, then its after(). HOME is a private layer over the user's; the object
// store and the runner's refs are read-only, new objects go through the quarantine and are moved in after.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { probeSandbox } from '../../../../src/engine/agents/sandbox.js';
import { sandboxCommand } from '../../../../src/engine/run/sandbox.js';
import { removeAgentHomes } from '../../../../src/engine/run/agent-home.js';
import type { RunContext } from '../../../../src/engine/types.js';
import type { RunTrust } from '../../../../src/engine/verify/trust.js';
import { git, gitdir, gitEnv, testdir } from '../../../support/repo.js';
import { makeQuarantine } from '../../../../src/engine/git/quarantine.js';

const probe = probeSandbox(process.env);
// vitest ends its workers without an exit event: the layers go here.
afterAll(removeAgentHomes);

function writeTree(root: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  }
}

/** A user's HOME with a toolchain, an agent's state and caches; a repository with the runner's pins ref. */
function setup() {
  const home = testdir('ralphkit-home-');
  writeTree(home, {
    '.local/bin/tool': '#!/bin/sh\necho tool-ran\n',
    '.claude/settings.json': '{}\n',
    '.claude/.credentials.json': '{"token":"user"}\n',
    '.claude/projects/old/session.jsonl': 'transcript\n',
    '.claude.json': '{"user":true}\n',
    '.cache/toolchain/bin/x': 'toolchain\n',
    '.npm/_cacache/index': 'cache\n',
    '.cache/go-build/00/entry': 'build output\n',
  });
  spawnSync('chmod', ['+x', path.join(home, '.local/bin/tool')]);
  const repo = gitdir({ 'test/one.test.mjs': 'the real test\n' });
  git(repo, 'update-ref', 'refs/ralphkit/loops/l1/pins', 'HEAD');
  const env = { ...gitEnv(), HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), RALPH_KEY_DIR: '' };
  const warnings: string[] = [];
  const run = {
    options: { sandbox: true, network: true },
    io: { env },
    paths: { repoRoot: repo },
    emit: (e: { message?: string }) => warnings.push(e.message ?? ''),
  } as unknown as RunContext;
  const trust = { topLevel: repo, gitDir: path.join(repo, '.git'), pins: null } as unknown as RunTrust;
  const scratch = testdir('ralphkit-scratch-');
  /** Runs `script` as the sandboxed agent, then the runner's after(); each line of output. */
  const agent = async (script: string): Promise<string[]> => {
    const sb = await sandboxCommand(run, trust, { file: 'sh', args: ['-c', script] }, scratch);
    const r = spawnSync(sb.file, sb.args, { env, cwd: repo, encoding: 'utf8' });
    await sb.after();
    return `${r.stdout}`
      .split('\n')
      .filter(Boolean)
      .concat(r.status === 0 ? [] : [`exit ${r.status}: ${r.stderr}`]);
  };
  return { home, repo, env, run, agent, warnings };
}

/** `name: wrote` or `name: refused`, for a shell command. */
const attempt = (name: string, cmd: string) =>
  `if (${cmd}) 2>/dev/null; then echo '${name}: wrote'; else echo '${name}: refused'; fi`;

describe.skipIf(!probe.ok)(`the agent's sandbox as a wall${probe.ok ? '' : ` (skipped: ${probe.message})`}`, () => {
  it("HOME: the agent writes ~/.npmrc, ~/.local/bin/node, ~/.claude/settings.json and renames over ~/.claude.json; none reaches the user's HOME, its toolchain runs, its state is its own from one run to the next", async () => {
    const { home, agent } = setup();
    const out = await agent(
      [
        attempt('npmrc', 'echo node-options=--import=/x > ~/.npmrc'),
        attempt('local-bin', 'echo evil > ~/.local/bin/node'),
        attempt('claude-settings', `echo '{"hooks":"evil"}' > ~/.claude/settings.json`),
        attempt('claude-json', `echo '{"agent":true}' > ~/.claude.json.tmp && mv ~/.claude.json.tmp ~/.claude.json`),
        attempt('new-cache', 'mkdir -p ~/.cache/newtool && echo c > ~/.cache/newtool/c'),
        attempt('toolchain-cache', 'echo evil > ~/.cache/toolchain/bin/x'),
        attempt('npm-cache', 'mkdir -p ~/.npm && echo c > ~/.npm/new'),
        attempt(
          'go-build-cache',
          'ls ~/.cache/go-build 2>/dev/null; mkdir -p ~/.cache/go-build/00 && echo poisoned > ~/.cache/go-build/00/entry',
        ),
        '~/.local/bin/tool',
        'cat ~/.claude/.credentials.json ~/.cache/toolchain/bin/x',
        'ls ~/.claude/projects 2>/dev/null || echo no-transcripts',
      ].join('\n'),
    );
    expect(out).toEqual([
      'npmrc: wrote',
      'local-bin: refused',
      'claude-settings: wrote',
      'claude-json: wrote',
      'new-cache: wrote',
      'toolchain-cache: refused',
      'npm-cache: wrote',
      'go-build-cache: wrote',
      'tool-ran',
      '{"token":"user"}',
      'toolchain',
      'no-transcripts',
    ]);
    // Nothing of it in the user's HOME.
    expect(existsSync(path.join(home, '.npmrc'))).toBe(false);
    expect(existsSync(path.join(home, '.local/bin/node'))).toBe(false);
    expect(readFileSync(path.join(home, '.claude/settings.json'), 'utf8')).toBe('{}\n');
    expect(readFileSync(path.join(home, '.claude.json'), 'utf8')).toBe('{"user":true}\n');
    expect(readdirSync(path.join(home, '.cache')).sort()).toEqual(['go-build', 'toolchain']);
    expect(readFileSync(path.join(home, '.cache/go-build/00/entry'), 'utf8')).toBe('build output\n');
    expect(readdirSync(path.join(home, '.npm'))).toEqual(['_cacache']);
    // The next run of the same loop finds the agent's own state again.
    expect(await agent('cat ~/.claude/settings.json ~/.claude.json ~/.npmrc')).toEqual([
      '{"hooks":"evil"}',
      '{"agent":true}',
      'node-options=--import=/x',
    ]);
  });

  it('HOME: a state folder that is a link (~/.codex -> a dotfiles folder) is copied as the folder it leads to, transcripts left out', async () => {
    const { home, agent } = setup();
    const dotfiles = testdir('ralphkit-dotfiles-');
    writeTree(dotfiles, { 'codex/config.toml': 'model = "x"\n', 'codex/sessions/old.jsonl': 'old\n' });
    spawnSync('ln', ['-s', path.join(dotfiles, 'codex'), path.join(home, '.codex')]);
    expect(await agent('cat ~/.codex/config.toml; ls ~/.codex; echo new > ~/.codex/config.toml && echo wrote')).toEqual(
      ['model = "x"', 'config.toml', 'wrote'],
    );
    expect(readFileSync(path.join(dotfiles, 'codex/config.toml'), 'utf8')).toBe('model = "x"\n');
  });

  it('HOME: a link the agent leaves in its layer where the runner works (~/.cache, ~/.claude) is removed, never followed on the host', async () => {
    const { home, agent } = setup();
    const victim = testdir('ralphkit-victim-');
    writeTree(victim, { 'toolchain/keep': 'keep\n', '.credentials.json': 'victim\n' });
    // The real login is newer than the layer's copy once the agent ran: the runner copies it in before the next run.
    const out = await agent(
      `mv ~/.cache ~/.cache-moved && ln -s ${victim} ~/.cache && mv ~/.claude ~/.claude-moved && ln -s ${victim} ~/.claude && echo linked`,
    );
    expect(out).toEqual(['linked']);
    writeFileSync(path.join(home, '.claude/.credentials.json'), '{"token":"refreshed by you"}\n');
    expect(await agent('cat ~/.cache/toolchain/bin/x ~/.claude/.credentials.json')).toEqual([
      'toolchain',
      '{"token":"refreshed by you"}',
    ]);
    expect(readFileSync(path.join(victim, 'toolchain/keep'), 'utf8')).toBe('keep\n');
    expect(readFileSync(path.join(victim, '.credentials.json'), 'utf8')).toBe('victim\n');
  });

  it('objects and refs: rewriting a loose object in place and moving refs/ralphkit are refused; an honest commit, stash, gc and fetch still work and reach the store', async () => {
    const { repo, agent, warnings } = setup();
    const oid = git(repo, 'rev-parse', 'HEAD:test/one.test.mjs');
    const loose = path.join(repo, '.git/objects', oid.slice(0, 2), oid.slice(2));
    const objectBefore = readFileSync(loose);
    const pins = git(repo, 'rev-parse', 'refs/ralphkit/loops/l1/pins');
    const remote = gitdir({ 'other.txt': 'from the remote\n' });
    // The remote must be visible in the sandbox (its /tmp is private): under the repository's .git.
    const shared = path.join(repo, '.git', 'remote');
    git(repo, 'clone', '-q', '--bare', remote, shared);
    const rel = `${oid.slice(0, 2)}/${oid.slice(2)}`;
    const out = await agent(
      [
        // The store itself, where the quarantine's alternates file says it is: read-only.
        'store=$(cat .git/objects/info/alternates)',
        attempt('chmod-object', `chmod 644 "$store/${rel}"`),
        attempt('rewrite-object', `printf x > "$store/${rel}"`),
        // .git/objects is the quarantine: a forged object and a pack land there, and are checked on the way in.
        attempt('forge-in-quarantine', `mkdir -p .git/objects/${oid.slice(0, 2)} && printf x > .git/objects/${rel}`),
        attempt('pack-in-quarantine', 'printf x > .git/objects/pack/pack-evil.pack'),
        attempt('move-pins', 'git update-ref refs/ralphkit/loops/l1/pins HEAD^{tree}'),
        attempt('add-runner-ref', 'git update-ref refs/ralphkit/loops/l1/plan HEAD'),
        attempt('commit', 'echo two > two.txt && git add two.txt && git commit -qm two'),
        attempt('stash', 'echo dirty >> two.txt && git stash -q && git stash pop -q && git commit -qam dirty'),
        attempt('fetch', `git -c fetch.unpackLimit=1 fetch -q ${shared} main:refs/heads/fetched`),
        attempt('gc-auto', 'git gc --auto'),
      ].join('\n'),
    );
    expect(out).toEqual([
      'chmod-object: refused',
      'rewrite-object: refused',
      'forge-in-quarantine: wrote',
      'pack-in-quarantine: wrote',
      'move-pins: refused',
      'add-runner-ref: refused',
      'commit: wrote',
      'stash: wrote',
      'fetch: wrote',
      'gc-auto: wrote',
    ]);
    expect(readFileSync(loose)).toEqual(objectBefore);
    expect(git(repo, 'rev-parse', 'refs/ralphkit/loops/l1/pins')).toBe(pins);
    // The agent's commits and the fetched pack are in the store now, and the quarantine is gone.
    expect(git(repo, 'log', '--format=%s', 'main')).toBe('dirty\ntwo\ninitial');
    expect(git(repo, 'show', 'fetched:other.txt')).toBe('from the remote');
    expect(git(repo, 'fsck', '--no-dangling', '--connectivity-only')).toBe('');
    expect(readdirSync(path.join(repo, '.git/objects')).filter((n) => n.startsWith('tmp_'))).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(
      `--sandbox: 2 object(s) the agent's git wrote were not taken into the repository (${oid}: not zlib data; pack-evil.pack: git index-pack refused it (fatal: `,
    );
  });

  it("a quarantine a killed runner left (its agent committed) is moved into the store by the next sandboxed run; a live runner's is left alone", async () => {
    const { repo, agent } = setup();
    const store = path.join(repo, '.git/objects');
    // What a runner killed during its agent's run leaves: the commit in the quarantine, the branch already on it.
    const dead = makeQuarantine(store, '999999~1');
    const live = makeQuarantine(store, `${process.pid}~`);
    const env = gitEnv({ GIT_OBJECT_DIRECTORY: dead, GIT_ALTERNATE_OBJECT_DIRECTORIES: store });
    const commit = execFileSync('git', ['commit-tree', '-p', 'HEAD', '-m', 'left behind', 'HEAD^{tree}'], {
      cwd: repo,
      env,
      encoding: 'utf8',
    }).trim();
    expect(spawnSync('git', ['cat-file', '-e', commit], { cwd: repo }).status).not.toBe(0);
    expect(await agent('true')).toEqual([]);
    expect(git(repo, 'cat-file', '-t', commit)).toBe('commit');
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live)).toBe(true);
  });
});
