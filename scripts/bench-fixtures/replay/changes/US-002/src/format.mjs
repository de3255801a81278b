import ms from 'ms';

/** A duration in milliseconds written out in words, rounded to its largest unit ("2 hours"). */
export function formatDuration(milliseconds) {
  return ms(milliseconds, { long: true });
}
