// SPDX-License-Identifier: LGPL-2.1-or-later
// The watch page's only script. It chooses the player:
//  - hls.js (vendored beside this file, loaded only then) where the browser has no HLS of its own
//    (Firefox), for a title (whose menus need its track API), for a live channel's DVR window (whose
//    scrub bar needs a seekable range), or when asked (?player=hls.js);
//  - dash.js (vendored too) for a title's DASH manifest when asked (?player=dash.js);
//  - else the browser's own <video> sources (?player=native for a title).
// For a title it fills the rendition, audio and subtitle menus from the player and shows the
// rendition playing. It shows the note when this browser can play nothing here, starts at ?t=, and
// seeks from the timeline strip without reloading the page (without script, its links reload at ?t=).
// A live channel with a DVR window gets a scrub bar over the window (the video's seekable range),
// the time of the picture and how far behind live it is, and a button back to live.
'use strict';
const video = document.getElementById('player');

function loadScript(src) {
  return new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = src;
    script.onload = resolve;
    script.onerror = () => reject(new Error(`cannot load ${src}`));
    document.head.appendChild(script);
  });
}

// The title's menus, bound to a player by callbacks; video.vodMenus for the browser test.
function titleMenus(onRendition, onAudio, onSubtitles) {
  const form = document.getElementById('tracks');
  const menus = { rendition: document.getElementById('rendition-menu'), audio: document.getElementById('audio-menu'),
    subtitles: document.getElementById('subtitles-menu'), playing: document.getElementById('rendition') };
  const fill = (menu, items, keep) => {
    while (menu.options.length > keep) menu.remove(keep);
    for (const [value, label] of items) menu.add(new Option(label, value));
  };
  menus.setRenditions = (items) => { fill(menus.rendition, items, 1); form.hidden = false; };
  menus.setAudio = (items, selected) => {
    fill(menus.audio, items, 0);
    menus.audio.value = String(selected);
    menus.audio.parentElement.hidden = items.length < 2;
  };
  menus.setSubtitles = (items, selected) => {
    fill(menus.subtitles, items, 1);
    menus.subtitles.value = String(selected);
    menus.subtitles.parentElement.hidden = items.length === 0;
  };
  menus.showPlaying = (text) => { menus.playing.value = text; };
  menus.rendition.addEventListener('change', () => onRendition(Number(menus.rendition.value)));
  menus.audio.addEventListener('change', () => onAudio(Number(menus.audio.value)));
  menus.subtitles.addEventListener('change', () => onSubtitles(Number(menus.subtitles.value)));
  video.vodMenus = menus;
  return menus;
}

const kbps = (bits) => `${Math.round(bits / 1000)} kb/s`;

function playWithHlsJs(url, cannotPlay) {
  return loadScript('/static/hls.min.js').then(() => {
    const Hls = window.Hls;
    if (!Hls || !Hls.isSupported()) return cannotPlay();
    // Low latency for live channels: parts and blocking reloads, and play up to 1.5x to catch up
    // with PART-HOLD-BACK after a start that had to begin further back (at a discontinuity).
    // A DVR window's playlist is a sliding window of whole segments: no parts, and a viewer may stay
    // as far behind live as it seeks (hls.js's default liveMaxLatencyDurationCount, Infinity: setting
    // liveMaxLatencyDuration without liveSyncDuration is an illegal config, which throws).
    const dvr = Boolean(document.getElementById('dvr'));
    const hls = new Hls(dvr ? { lowLatencyMode: false } : { lowLatencyMode: true, maxLiveSyncPlaybackRate: 1.5 });
    hls.on(Hls.Events.ERROR, (event, data) => { if (data.fatal) cannotPlay(); });
    // hls.js speeds up only within one target duration of its target latency; further back it
    // counts as DVR and stays there. A live viewer left further back (a slow start, a stall) jumps
    // forward to the target latency instead, once the playlist says what that is.
    hls.on(Hls.Events.LEVEL_LOADED, (event, data) => {
      const d = data.details;
      if (d.live && !dvr && hls.config.liveMaxLatencyDuration === undefined) {
        hls.config.liveMaxLatencyDuration = (d.partHoldBack || d.holdBack || 3 * d.targetduration) + d.targetduration;
      }
    });
    if (video.dataset.title) {
      // A variant's URI is video-LABEL/index.m3u8 (docs/proxy.md, "Titles").
      const label = (level) => {
        const m = /video-([^/]+)\/index\.m3u8/.exec(level.url[0] || '');
        return m ? decodeURIComponent(m[1]) : `${level.height}p`;
      };
      const menus = titleMenus((i) => { hls.currentLevel = i; }, (i) => { hls.audioTrack = i; }, (i) => { hls.subtitleTrack = i; });
      hls.on(Hls.Events.MANIFEST_PARSED, () => {
        menus.setRenditions(hls.levels.map((l, i) => [i, `${label(l)} · ${l.width}×${l.height} · ${kbps(l.bitrate)}`]).reverse());
      });
      hls.on(Hls.Events.LEVEL_SWITCHED, (event, data) => {
        const l = hls.levels[data.level];
        menus.showPlaying(`playing ${label(l)} (${l.width}×${l.height}, ${kbps(l.bitrate)})${hls.autoLevelEnabled ? ', chosen by bandwidth' : ''}`);
        video.dataset.rendition = label(l);
      });
      const audio = () => menus.setAudio(hls.audioTracks.map((t, i) => [i, t.name]), hls.audioTrack);
      const subtitles = () => menus.setSubtitles(hls.subtitleTracks.map((t, i) => [i, t.name]), hls.subtitleTrack);
      hls.on(Hls.Events.AUDIO_TRACKS_UPDATED, audio);
      hls.on(Hls.Events.AUDIO_TRACK_SWITCHED, audio);
      hls.on(Hls.Events.SUBTITLE_TRACKS_UPDATED, subtitles);
      hls.on(Hls.Events.SUBTITLE_TRACK_SWITCH, subtitles);
    }
    hls.loadSource(url);
    hls.attachMedia(video);
    video.vodHls = hls;  // for the browser test and the console: hls.latency, hls.levels
  });
}

function playWithDashJs(url, cannotPlay) {
  return loadScript('/static/dash.mediaplayer.min.js').then(() => {
    const dashjs = window.dashjs;
    if (!dashjs || !('MediaSource' in window)) return cannotPlay();
    const player = dashjs.MediaPlayer().create();
    const events = dashjs.MediaPlayer.events;
    player.on(events.ERROR, (e) => { if (!e.error || e.error.code !== 22) cannotPlay(); });  // 22: a download to retry
    const reps = () => player.getRepresentationsByType('video');
    const menus = titleMenus((i) => {
      player.updateSettings({ streaming: { abr: { autoSwitchBitrate: { video: i < 0 } } } });
      if (i >= 0) player.setRepresentationForTypeById('video', reps()[i].id, true);
    }, (i) => player.setCurrentTrack(player.getTracksFor('audio')[i]), (i) => player.setTextTrack(i));
    const trackName = (t) => (t.labels && t.labels.length ? t.labels[0].text : t.lang || `track ${t.index}`);
    player.on(events.STREAM_INITIALIZED, () => {
      menus.setRenditions(reps().map((r, i) => [i, `${r.id} · ${r.width}×${r.height} · ${kbps(r.bandwidth)}`]).reverse());
      const audio = player.getTracksFor('audio');
      menus.setAudio(audio.map((t, i) => [i, trackName(t)]), Math.max(0, audio.indexOf(player.getCurrentTrackFor('audio'))));
      menus.setSubtitles(player.getTracksFor('text').map((t, i) => [i, trackName(t)]), -1);
    });
    player.on(events.QUALITY_CHANGE_RENDERED, (e) => {
      if (e.mediaType !== 'video') return;
      const r = player.getCurrentRepresentationForType('video');
      if (!r) return;
      menus.showPlaying(`playing ${r.id} (${r.width}×${r.height}, ${kbps(r.bandwidth)})`);
      video.dataset.rendition = r.id;
    });
    player.initialize(video, url, false);
    video.vodDash = player;  // for the browser test and the console
  });
}

if (video) {
  const note = document.getElementById('cannot-play');
  const cannotPlay = () => { note.hidden = false; };
  const sources = [...video.querySelectorAll('source')];
  const hlsSource = sources.find((s) => s.type === 'application/vnd.apple.mpegurl');
  const wanted = new URLSearchParams(location.search).get('player');
  const mse = 'MediaSource' in window;
  let player = null;
  if (video.dataset.dash && wanted === 'dash.js' && mse) player = playWithDashJs;
  // A DVR window plays through hls.js wherever it can: a browser's own HLS (Chromium's) gives a live
  // stream no seekable range, which the scrub bar spans.
  else if (hlsSource && mse && wanted !== 'native' &&
           (wanted === 'hls.js' || video.dataset.title || document.getElementById('dvr') || video.canPlayType(hlsSource.type) === '')) {
    player = playWithHlsJs;
  }
  if (player) {
    // The players play through Media Source Extensions: the <source> elements go, the player attaches.
    const url = video.dataset.dash && player === playWithDashJs ? video.dataset.dash : hlsSource.src;
    for (const s of sources) s.remove();
    video.removeAttribute('src');
    player(url, cannotPlay).catch(cannotPlay);
  } else {
    if (sources.every((s) => video.canPlayType(s.type) === '')) cannotPlay();
    // A <source> that fails (e.g. a browser's HLS refusing a stream) moves on to the next; the last one failing means none plays.
    if (sources.length) sources[sources.length - 1].addEventListener('error', cannotPlay);
  }
  video.addEventListener('error', cannotPlay);
  if (video.dataset.start) {
    video.addEventListener('loadedmetadata', () => { video.currentTime = Number(video.dataset.start); }, { once: true });
  }
  const dvrForm = document.getElementById('dvr');
  if (dvrForm) {
    const scrub = document.getElementById('scrub');
    const behind = document.getElementById('behind');
    let dragging = false;
    const range = () => (video.seekable.length ? [video.seekable.start(0), video.seekable.end(video.seekable.length - 1)] : null);
    const show = () => {
      const r = range();
      if (!r) return;
      scrub.min = String(r[0]);
      scrub.max = String(r[1]);
      if (!dragging) scrub.value = String(video.currentTime);
      const date = video.vodHls && video.vodHls.playingDate;
      const late = Math.max(0, r[1] - video.currentTime);
      behind.value = `${date ? `${date.toISOString().slice(11, 19)} UTC · ` : ''}${late < 10 ? 'live' : `${Math.round(late)} s behind live`}`;
    };
    video.addEventListener('timeupdate', show);
    video.addEventListener('progress', show);
    scrub.addEventListener('input', () => { dragging = true; });
    scrub.addEventListener('change', () => {
      dragging = false;
      video.currentTime = Number(scrub.value);
      video.play().catch(() => {});
    });
    document.getElementById('go-live').addEventListener('click', () => {
      const r = range();
      const live = video.vodHls && video.vodHls.liveSyncPosition;
      if (live || r) video.currentTime = live || r[1];
      video.play().catch(() => {});
    });
  }
  for (const link of document.querySelectorAll('.strip a')) {
    link.addEventListener('click', (event) => {
      event.preventDefault();
      video.currentTime = Number(link.dataset.t);
      video.play().catch(() => {});  // autoplay policy: the user presses play
    });
  }
}
