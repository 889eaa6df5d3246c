// SPDX-License-Identifier: LGPL-2.1-or-later
// The watch page's only script: play the HLS source with hls.js (vendored beside this file, loaded
// only then) where the browser has no HLS of its own (Firefox), or when the page is asked for it
// (?player=hls.js); show the note when this browser can play nothing here; start at ?t=; and seek
// from the timeline strip without reloading the page (without script, its links reload at ?t=).
'use strict';
const video = document.getElementById('player');
if (video) {
  const note = document.getElementById('cannot-play');
  const cannotPlay = () => { note.hidden = false; };
  const sources = [...video.querySelectorAll('source')];
  const hlsSource = sources.find((s) => s.type === 'application/vnd.apple.mpegurl');
  const wanted = new URLSearchParams(location.search).get('player') === 'hls.js';
  const useHlsJs = hlsSource && (wanted || video.canPlayType(hlsSource.type) === '') && 'MediaSource' in window;
  if (useHlsJs) {
    // hls.js plays through Media Source Extensions: the <source> elements go, the player attaches.
    const url = hlsSource.src;
    for (const s of sources) s.remove();
    video.removeAttribute('src');
    const script = document.createElement('script');
    script.src = '/static/hls.light.min.js';
    script.onload = () => {
      if (!window.Hls || !window.Hls.isSupported()) return cannotPlay();
      // Low latency for live channels: parts and blocking reloads, and play up to 1.5x to catch up
      // with PART-HOLD-BACK after a start that had to begin further back (at a discontinuity).
      const hls = new window.Hls({ lowLatencyMode: true, maxLiveSyncPlaybackRate: 1.5 });
      hls.on(window.Hls.Events.ERROR, (event, data) => { if (data.fatal) cannotPlay(); });
      // hls.js speeds up only within one target duration of its target latency; further back it
      // counts as DVR and stays there. A live viewer left further back (a slow start, a stall) jumps
      // forward to the target latency instead, once the playlist says what that is.
      hls.on(window.Hls.Events.LEVEL_LOADED, (event, data) => {
        const d = data.details;
        if (d.live && hls.config.liveMaxLatencyDuration === undefined) {
          hls.config.liveMaxLatencyDuration = (d.partHoldBack || d.holdBack || 3 * d.targetduration) + d.targetduration;
        }
      });
      hls.loadSource(url);
      hls.attachMedia(video);
      video.vodHls = hls;  // for the browser test and the console: hls.latency, hls.levels
    };
    script.onerror = cannotPlay;
    document.head.appendChild(script);
  } else {
    if (sources.every((s) => video.canPlayType(s.type) === '')) cannotPlay();
    // A <source> that fails (e.g. a browser's HLS refusing a stream) moves on to the next; the last one failing means none plays.
    if (sources.length) sources[sources.length - 1].addEventListener('error', cannotPlay);
  }
  video.addEventListener('error', cannotPlay);
  if (video.dataset.start) {
    video.addEventListener('loadedmetadata', () => { video.currentTime = Number(video.dataset.start); }, { once: true });
  }
  for (const link of document.querySelectorAll('.strip a')) {
    link.addEventListener('click', (event) => {
      event.preventDefault();
      video.currentTime = Number(link.dataset.t);
      video.play().catch(() => {});  // autoplay policy: the user presses play
    });
  }
}
