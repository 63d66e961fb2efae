const SAME_SIGNAL_WINDOW_MS = 2000;

/** Awaits `work`, calling `report` every `everyMs` until it settles: a slow stop says what it waits for. */
export async function reportWhileWaiting<T>(work: Promise<T>, report: () => void, everyMs = 5_000): Promise<T> {
  const timer = setInterval(report, everyMs);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}

/**
 * Runs a long-lived process: starts it, and on SIGINT/SIGTERM stops it cleanly once (a second
 * signal, two seconds or more after the first, forces the exit). Start-up errors print one clear
 * line and exit 1.
 */
export function runMain(name: string, start: () => Promise<{ stop: () => Promise<void>; done?: Promise<unknown> }>) {
  let stopping = false;
  let stoppingSince = 0;
  let stop: (() => Promise<void>) | undefined;
  const runStop = (stopStarted: () => Promise<void>) =>
    stopStarted().then(
      () => {
        process.stderr.write(`${name}: stopped\n`);
        process.exit(0);
      },
      (err) => {
        process.stderr.write(`${name}: error during shutdown: ${err?.stack ?? err}\n`);
        process.exit(1);
      },
    );
  const shutdown = (signal: string) => {
    if (stopping) {
      // One Ctrl-C often arrives twice: from the terminal to the whole process group, and
      // relayed by a parent (npm, tsx). Only a later signal is a deliberate second Ctrl-C.
      if (Date.now() - stoppingSince < SAME_SIGNAL_WINDOW_MS) return;
      process.stderr.write(`${name}: forced exit on second ${signal}\n`);
      process.exit(130);
    }
    stopping = true;
    stoppingSince = Date.now();
    process.stderr.write(`${name}: ${signal} received, shutting down…\n`);
    // A signal while the process still starts stops it once it has started (below).
    if (stop) void runStop(stop);
  };
  // Listening before the start, so that a signal at any moment is a clean stop, never the default
  // kill (a process may announce it is up before start() has returned).
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  start()
    .then((started) => {
      stop = started.stop;
      if (stopping) return void runStop(started.stop);
      started.done?.then(
        () => {
          if (!stopping) shutdown('exit');
        },
        (err) => {
          process.stderr.write(`${name}: stopped with an error: ${err?.stack ?? err}\n`);
          process.exit(1);
        },
      );
    })
    .catch((err) => {
      process.stderr.write(`${name}: failed to start: ${err?.message ?? err}\n`);
      if (process.env.LOG_LEVEL === 'debug') process.stderr.write(`${err?.stack}\n`);
      process.exit(1);
    });
}
