import { describeTotal } from './report.mjs';
import { slug } from './slug.mjs';

/** A task list as text: one line per task (its slug and estimate), then the total. */
export function summary(tasks) {
  const lines = tasks.map((task) => `${slug(task.title)}: ${task.estimate}`);
  return [...lines, describeTotal(tasks.map((task) => task.estimate))].join('\n');
}
