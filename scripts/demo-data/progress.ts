// A progress bar on stderr: rows done / total, rate and ETA. Redrawn in place on a terminal;
// elsewhere (CI logs, pipes) one line every 10 %, so logs stay readable.

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

function clock(seconds: number): string {
  if (!Number.isFinite(seconds)) return '--:--';
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

export function progressBar(label: string, stream: NodeJS.WriteStream = process.stderr) {
  const started = Date.now();
  const tty = !!stream.isTTY;
  let lastDraw = 0;
  let lastDecile = -1;
  const line = (done: number, total: number) => {
    const elapsed = (Date.now() - started) / 1000;
    const rate = elapsed > 0 ? done / elapsed : 0;
    const share = total ? Math.min(1, done / total) : 1;
    const width = 30;
    const filled = Math.round(share * width);
    const eta = rate > 0 ? (total - done) / rate : Infinity;
    // A rate under one a second (steps rather than rows) would read "0/s": left out.
    const perSecond = rate >= 1 ? ` ${fmt(rate)}/s` : '';
    return `${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${fmt(done)}/${fmt(total)} ${(share * 100).toFixed(0).padStart(3)}%${perSecond} ETA ${clock(eta)} elapsed ${clock(elapsed)}`;
  };
  return {
    update(done: number, total: number) {
      const now = Date.now();
      if (tty) {
        if (now - lastDraw < 100 && done < total) return;
        lastDraw = now;
        stream.write(`\r${line(done, total)}\x1b[K`);
      } else {
        const decile = total ? Math.floor((done / total) * 10) : 10;
        if (decile === lastDecile) return;
        lastDecile = decile;
        stream.write(`${line(done, total)}\n`);
      }
    },
    done() {
      if (tty) stream.write('\n');
    },
  };
}
