// An agent, or a plan it wrote, that prints terminal escape sequences (OSC 52 writes the clipboard of terminals that
// honour it; CSI and 8-bit C1 controls move the cursor and rewrite lines; a carriage return or a bidi override makes
// one text read as another): none reaches the owner's terminal through ralph.sh, `ralphkit status` or
// `ralphkit validate`, while the honest text around them does, the --json documents keep every byte (escaped), and
// the files keep the bytes. (The check's output goes to progress.txt, not the terminal.) Needs `npm run build` first (npm test does it).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { run, runCli } from '../support/repo.js';
import { installedRepo } from '../support/installed-repo.js';
import { agent, ralph } from '../support/loop-repo.js';
import { plan, story } from '../support/plan.js';

// ESC, BEL, CR, every C1 control and the bidi controls: what a terminal could act on.
const UNSAFE = /[\x07\x1b\r\u0080-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
const OSC52 = '\x1b]52;c;cHduZWQ=\x07';
const C1 = '\u009b2J';

function escapesRepo(): string {
  const prd = plan([
    story('US-001', {
      title: `Title ${OSC52}with a clipboard write${C1}`,
      acceptanceCriteria: ['done'],
      // The check's output carries an OSC 52 and a C1 CSI (UTF-8 \302\233); its command carries a CSI of its own.
      checks: [`printf 'check said \\033]52;c;cHduZWQ=\\007no\\302\\2332J\\n'; exit 1 # \u001b[2J`],
    }),
  ]);
  return installedRepo({ plan: prd });
}

const both = (r: { stdout: string; stderr: string }) => `${r.stdout}\n${r.stderr}`;

describe('escape sequences from the agent and the plan', () => {
  it("ralph.sh shows the agent's stderr and the check command without them, and the files keep the bytes", async () => {
    const dir = escapesRepo();
    const r = await ralph(dir, ['--agent-cmd', agent('escapes'), '--pause', '0', '--name', 'esc', '1']);
    expect(r.code).toBe(1);
    expect(both(r)).not.toMatch(UNSAFE);
    // The honest text around the sequences is all there.
    expect(r.stderr).toContain('agent trouble: one two threeOVERWRITTEN eerht');
    expect(r.stderr).toContain(
      "check `printf 'check said \\033]52;c;cHduZWQ=\\007no\\302\\2332J\\n'; exit 1 # ` exited 1",
    );
    // Files are not the terminal: the iteration log keeps what the agent printed, byte for byte.
    expect(readFileSync(path.join(dir, 'ralph/.runs/esc/iteration-1.log'), 'utf8')).toContain(
      `agent trouble: ${OSC52}one`,
    );
  });

  it('ralph.sh --json: stdout is JSON with every character a terminal acts on escaped, and the same data', async () => {
    const dir = escapesRepo();
    const r = await ralph(dir, ['--agent-cmd', agent('escapes'), '--pause', '0', '--json', '1']);
    expect(both(r)).not.toMatch(UNSAFE);
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; text?: string });
    // The 8-bit OSC and the bidi override the tail kept are still in the data, as \u escapes on the wire.
    const tail = events.find((e) => e.type === 'tool' && e.text?.includes('agent trouble:'))?.text;
    expect(tail).toContain('\u009d52;c;cHduZWQ=\u009c');
    expect(tail).toContain('\u202eeerht');
    expect(r.stdout).toContain('\\u009d52;c;cHduZWQ=\\u009c');
  });

  it('status (ralphkit and ralph.mjs, table and --json) shows a forged state without them', async () => {
    const dir = escapesRepo();
    await ralph(dir, ['--agent-cmd', agent('escapes'), '--pause', '0', '1']);
    const forged = JSON.parse(readFileSync(path.join(dir, 'ralph/.runs/forged/state.json'), 'utf8')) as {
      message: string;
      status: string;
    };
    expect(forged.message).toMatch(UNSAFE);
    for (const status of [
      await runCli(['status'], { cwd: dir }),
      await run(process.execPath, [path.join(dir, 'ralph/ralph.mjs'), 'status'], { cwd: dir }),
    ]) {
      expect(status.code).toBe(0);
      expect(both(status)).not.toMatch(UNSAFE);
      expect(status.stdout).toMatch(/^forged\s+stuck\s+1\/3\s+cmd: agent\s/m);
      expect(status.stdout).toContain('└ the agent wrote thistxetOVERWRITTEN');
    }
    const json = await runCli(['status', '--json'], { cwd: dir });
    expect(json.stdout).not.toMatch(UNSAFE);
    const loops = (JSON.parse(json.stdout) as { loops: Array<{ id: string; message?: string; status: string }> }).loops;
    expect(loops.find((l) => l.id === 'forged')).toMatchObject({ message: forged.message, status: forged.status });
  });

  it("validate quotes a plan's values without them, in text and in --json", async () => {
    const dir = escapesRepo();
    const plan = JSON.parse(readFileSync(path.join(dir, 'ralph/prd.json'), 'utf8'));
    plan.userStories[0].dependsOn = [`US-9${OSC52}${C1}`];
    writeFileSync(path.join(dir, 'bad.json'), JSON.stringify(plan, null, 2));
    const text = await runCli(['validate', 'bad.json'], { cwd: dir });
    expect(text.code).toBe(2);
    expect(both(text)).not.toMatch(UNSAFE);
    expect(text.stdout).toContain('dependsOn names "US-9", which is not the id of any story');
    const json = await runCli(['validate', '--json', 'bad.json'], { cwd: dir });
    expect(both(json)).not.toMatch(UNSAFE);
    expect(JSON.stringify(JSON.parse(json.stdout))).toContain(JSON.stringify(`US-9${OSC52}${C1}`).slice(1, -1));
  });

  it('install --diff shows an edited runner file without them, in text and in --json', async () => {
    const dir = installedRepo();
    // The agent can write ralph/ralph.sh; the owner then reads the diff install shows.
    writeFileSync(
      path.join(dir, 'ralph/ralph.sh'),
      `${readFileSync(path.join(dir, 'ralph/ralph.sh'), 'utf8')}# ${OSC52}edited${C1}\n`,
    );
    const text = await runCli(['install', '--diff', '--dry-run', '--force', '--cwd', dir]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('edited');
    expect(both(text)).not.toMatch(UNSAFE);
    const json = await runCli(['install', '--diff', '--dry-run', '--force', '--json', '--cwd', dir]);
    expect(both(json)).not.toMatch(UNSAFE);
    const doc = JSON.parse(json.stdout) as { files: { path: string; diff?: string }[] };
    expect(doc.files.find((f) => f.path === 'ralph/ralph.sh')?.diff).toContain(`${OSC52}edited${C1}`);
  });
});
