// Headless Chromium from Debian's `chromium` package, driven by playwright-core (never a downloaded
// browser build). Every request the page makes is recorded, so a test can check where it went.
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ARGS });
}

export interface RecordedPage {
  page: Page;
  /** Every URL the page requested, in order. */
  requests: string[];
  /** Console errors and page errors. */
  errors: string[];
  /** How many documents the page loaded (1 = never reloaded; changing #hash does not count). */
  loads(): number;
}

export async function openRecordedPage(browser: Browser, viewport = { width: 1400, height: 1000 }): Promise<RecordedPage> {
  const page = await browser.newPage({ viewport });
  const requests: string[] = [];
  const errors: string[] = [];
  let loads = 0;
  page.on('request', (request) => requests.push(request.url()));
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('load', () => (loads += 1));
  return { page, requests, errors, loads: () => loads };
}
