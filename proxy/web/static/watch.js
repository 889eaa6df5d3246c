// SPDX-License-Identifier: LGPL-2.1-or-later
// The watch page's only script: show the note when this browser cannot play the movie (an MPEG-TS
// movie plays as HLS, which not every browser has), start at ?t=, and seek from the timeline strip
// without reloading the page (without script, its links reload at ?t=).
'use strict';
const video = document.getElementById('player');
if (video) {
  const note = document.getElementById('cannot-play');
  const cannotPlay = () => { note.hidden = false; };
  const sources = [...video.querySelectorAll('source')];
  if (sources.every((s) => video.canPlayType(s.type) === '')) cannotPlay();
  // A <source> that fails (e.g. a browser's HLS refusing a stream) moves on to the next; the last one failing means none plays.
  if (sources.length) sources[sources.length - 1].addEventListener('error', cannotPlay);
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
