import { setText } from './dom.js';

/** Copies text, saying so on the button for a moment (or why it could not). */
export async function copyText(button: HTMLButtonElement, text: string): Promise<void> {
  const label = button.textContent ?? 'Copy';
  try {
    await navigator.clipboard.writeText(text);
    setText(button, 'Copied');
  } catch {
    setText(button, 'Copy failed');
  }
  setTimeout(() => setText(button, label), 1500);
}
