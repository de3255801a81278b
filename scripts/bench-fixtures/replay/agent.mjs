#!/usr/bin/env node
// The honest agent of the `replay` benchmark: it does one story per run by copying that story's prepared change
// (changes/<id>/, next to this file) into the repository, commits it, then sets that story's `passes` and commits
// again (two commits, as an agent that claims after its work). Its story is RALPH_STORY_ID when a --parallel worker
// runs it, else the open story with the lowest priority, as in a single loop. It neither installs nor tests: what it
// copies is known to pass its story's test once the stories that story builds on are in.
import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const prdPath = process.env.RALPH_PRD ?? path.resolve('ralph/prd.json');
const git = (...args) => execFileSync('git', args, { stdio: ['ignore', 'ignore', 'inherit'] });

// The runner writes the prompt on stdin; it is read to the end so the runner's write never blocks.
try {
  readFileSync(0);
} catch {}
const prd = JSON.parse(readFileSync(prdPath, 'utf8'));
const assigned = process.env.RALPH_STORY_ID;
const story = assigned
  ? prd.userStories.find((s) => s.id === assigned)
  : prd.userStories.filter((s) => !s.passes).sort((a, b) => a.priority - b.priority)[0];
if (assigned && !story) {
  console.error(`RALPH_STORY_ID=${assigned} is not a story of ${prdPath}`);
  process.exit(2);
}
if (story) {
  cpSync(path.join(import.meta.dirname, 'changes', story.id), '.', { recursive: true });
  git('add', '-A');
  git('commit', '-q', '-m', `feat: ${story.id} - ${story.title}`);
  story.passes = true;
  writeFileSync(prdPath, `${JSON.stringify(prd, null, 2)}\n`);
  git('commit', '-q', '-am', `chore: ${story.id} passes`);
}
const open = prd.userStories.filter((s) => !s.passes).length;
console.log(story && open > 0 ? `Finished ${story.id}.` : '<promise>COMPLETE</promise>');
