// The only module that imports kleur. Colours are named by use; everything goes to stderr
// except `out`, which is the command's result on stdout.
import kleur from 'kleur';

export const color = {
  error: (s: string) => kleur.red(s),
  warn: (s: string) => kleur.yellow(s),
  info: (s: string) => kleur.cyan(s),
  success: (s: string) => kleur.green(s),
  dim: (s: string) => kleur.dim(s),
  bold: (s: string) => kleur.bold(s),
};

export const logger = {
  out(text: string) {
    process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  },
  info(text: string) {
    process.stderr.write(`${text}\n`);
  },
  success(text: string) {
    process.stderr.write(`${color.success(text)}\n`);
  },
  warn(text: string) {
    process.stderr.write(`${color.warn('warning:')} ${text}\n`);
  },
  error(text: string) {
    process.stderr.write(`${color.error('error:')} ${text}\n`);
  },
  hint(text: string) {
    process.stderr.write(`${color.dim('hint:')} ${text}\n`);
  },
};
