// The only module that imports change-case.
import { kebabCase } from 'change-case';

/** `My Review Notes` → `my-review-notes`, `myReviewNotes` → `my-review-notes`. */
export function toKebabCase(text: string): string {
  return kebabCase(text);
}
