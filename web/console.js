// The operator's console: uses only the HTTP API (docs/http-api.md). Plain JavaScript, no build step.
// Hooks for tests and scripts (keep them stable): tiles carry data-camera / data-scene, data-tally
// (program|preview|both|none) and data-state (live|lost|...); buttons carry data-action; the big tiles
// are data-role="program" and data-role="preview".
'use strict';

const token = new URLSearchParams(location.search).get('token');
const withToken = (path) => token ? `${path}${path.includes('?') ? '&' : '?'}token=${encodeURIComponent(token)}` : path;
const $ = (selector, root = document) => root.querySelector(selector);

const state = { status: null, cameras: [], scenes: [], selected: null, startedAt: null, uptimeBase: null };

async function api(method, path, body) {
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const init = { method, headers };
  if (body !== undefined) { init.body = JSON.stringify(body); headers['Content-Type'] = 'application/json'; }
  const response = await fetch(path, init);
  const text = await response.text();
  const json = text ? JSON.parse(text) : {};
  if (!response.ok) throw new Error(json.error ? json.error.message : `${response.status}`);
  return json;
}

function say(text) { $('#message').textContent = text; }
const act = (promise) => promise.then(() => say(''), (error) => say(error.message));

// Pictures: one connection for every tile. GET /api/v1/tiles/stream?tiles=program,preview,cam1,...
// is multipart: each part one tile's newest JPEG (Content-Length), its tile named in X-Tile. Read with
// fetch() and a stream reader, each picture is shown in its tile's <img> through an object URL (the
// previous one revoked, so hours of pictures leak nothing). The stream opens again (with back-off) when
// it ends, and with the new list when cameras or scenes come or go.
const tileStream = { wanted: '', controller: null, timer: null, backoff: 250, urls: new Map(), parts: 0 };
const partHeadEnd = new Uint8Array([13, 10, 13, 10]);

function tileImage(tile) {
  if (tile === 'program' || tile === 'preview') return $(`[data-role="${tile}"] img`);
  const figure = $(`#tiles [data-camera="${CSS.escape(tile)}"]`) || $(`#tiles [data-scene="${CSS.escape(tile)}"]`);
  return figure && $('img', figure);
}

function showTile(tile, jpeg) {
  const img = tileImage(tile);
  if (!img) return;
  const url = URL.createObjectURL(new Blob([jpeg], { type: 'image/jpeg' }));
  const previous = tileStream.urls.get(tile);
  tileStream.urls.set(tile, url);
  img.src = url;
  if (previous) URL.revokeObjectURL(previous);
  tileStream.parts += 1;
  document.body.dataset.tileParts = String(tileStream.parts);
}

function watchTiles(names) {
  const wanted = names.join(',');
  if (wanted === tileStream.wanted) return;
  tileStream.wanted = wanted;
  for (const [tile, url] of tileStream.urls) {
    if (!names.includes(tile)) { URL.revokeObjectURL(url); tileStream.urls.delete(tile); }
  }
  if (tileStream.controller) tileStream.controller.abort();
  clearTimeout(tileStream.timer);
  openTiles();
}

async function openTiles() {
  const controller = new AbortController();
  tileStream.controller = controller;
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  try {
    const response = await fetch(`/api/v1/tiles/stream?tiles=${encodeURIComponent(tileStream.wanted)}`,
      { headers, signal: controller.signal, cache: 'no-store' });
    if (!response.ok) throw new Error(`tiles: ${response.status}`);
    await readParts(response.body.getReader(), (fields, jpeg) => {
      tileStream.backoff = 250;
      showTile(fields['x-tile'], jpeg);
    });
  } catch { /* ended, refused or aborted: below */ }
  if (tileStream.controller !== controller || controller.signal.aborted) return;
  tileStream.timer = setTimeout(openTiles, tileStream.backoff);
  tileStream.backoff = Math.min(5000, tileStream.backoff * 2);
}

function indexOf(bytes, pattern, from = 0) {
  outer: for (let i = from; i <= bytes.length - pattern.length; i++) {
    for (let j = 0; j < pattern.length; j++) if (bytes[i + j] !== pattern[j]) continue outer;
    return i;
  }
  return -1;
}

// Calls onPart(fields, jpeg) for each whole part of a multipart tile stream, with its header fields
// (names in lower case), until the stream ends.
async function readParts(reader, onPart) {
  const decoder = new TextDecoder();
  let buffer = new Uint8Array(0);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    const joined = new Uint8Array(buffer.length + value.length);
    joined.set(buffer);
    joined.set(value, buffer.length);
    buffer = joined;
    for (;;) {
      const headEnd = indexOf(buffer, partHeadEnd);
      if (headEnd < 0) break;
      const fields = {};
      for (const line of decoder.decode(buffer.subarray(0, headEnd)).split('\r\n')) {
        const colon = line.indexOf(':');
        if (colon > 0) fields[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(fields['content-length']);
      if (!Number.isInteger(length) || length < 0) throw new Error('tiles: a part without Content-Length');
      const start = headEnd + partHeadEnd.length;
      if (buffer.length < start + length + 2) break;
      const jpeg = buffer.slice(start, start + length);
      buffer = buffer.slice(start + length + 2);
      onPart(fields, jpeg);
    }
  }
}

// The tiles: one per camera, then one per scene.
function tileFor(kind, name) {
  const tiles = $('#tiles');
  let tile = tiles.querySelector(`[data-${kind}="${CSS.escape(name)}"]`);
  if (tile) return tile;
  tile = document.createElement('figure');
  tile.className = 'tile';
  tile.dataset[kind] = name;
  tile.dataset.tally = 'none';
  tile.innerHTML = '<img alt=""><figcaption><b class="name"></b><span class="state"></span><span class="format"></span>'
    + '<button data-action="preview" title="to preview">PVW</button><button data-action="switch" title="straight to program">PGM</button></figcaption>';
  $('.name', tile).textContent = name;
  for (const button of tile.querySelectorAll('[data-action]')) {
    button.addEventListener('click', (event) => {
      event.stopPropagation();
      act(api('POST', `/api/v1/${button.dataset.action}`, { source: name }).then(refresh));
    });
  }
  $('img', tile).alt = name;
  tile.addEventListener('click', (event) => tileClicked(tile, kind, name, event));
  tiles.appendChild(tile);
  return tile;
}

function tileClicked(tile, kind, name, event) {
  if (kind === 'camera' && state.selected === name && event.target.tagName === 'IMG') {
    focusAt(tile, name, event);
    return;
  }
  if (kind === 'camera') selectCamera(name);
  const toProgram = $('#straight-to-program').checked;
  act(api('POST', toProgram ? '/api/v1/switch' : '/api/v1/preview', { source: name }).then(refresh));
}

function render() {
  const status = state.status;
  if (!status) return;
  const program = status.program || {};
  const tally = program.tally || {};
  for (const camera of state.cameras) {
    const tile = tileFor('camera', camera.name);
    // A node following its switcher (tally_from) lights its tiles as the switcher does (none while it is away).
    const fromSwitcher = camera.switcher_tally;
    tile.dataset.tally = fromSwitcher != null ? (fromSwitcher === 'unknown' ? 'none' : fromSwitcher) : (tally[camera.name] || camera.tally || 'none');
    tile.dataset.state = camera.state;
    $('.state', tile).textContent = camera.state;
    const format = camera.format;
    $('.format', tile).textContent = format ? `${format.width}x${format.height} ${format.fps} fps ${format.pixel_format}` : '';
    tile.classList.toggle('selected', state.selected === camera.name);
  }
  for (const scene of state.scenes) {
    const tile = tileFor('scene', scene.name);
    tile.dataset.tally = tally[scene.name] || scene.tally || 'none';
    tile.dataset.state = 'live';
    $('.state', tile).textContent = (scene.sources || []).join(' + ');
    $('.format', tile).textContent = scene.layout || 'layers';
  }
  for (const role of ['program', 'preview']) {
    const big = $(`[data-role="${role}"]`);
    $('[data-field="source"]', big).textContent = program[role === 'program' ? 'source' : 'preview'] || '';
  }
  // Tiles of cameras or scenes that are gone leave; the stream follows the list.
  const names = new Set([...state.cameras.map((c) => `camera:${c.name}`), ...state.scenes.map((s) => `scene:${s.name}`)]);
  for (const tile of $('#tiles').querySelectorAll('[data-camera], [data-scene]')) {
    if (!names.has(tile.dataset.camera !== undefined ? `camera:${tile.dataset.camera}` : `scene:${tile.dataset.scene}`)) tile.remove();
  }
  watchTiles(['program', 'preview', ...state.cameras.map((c) => c.name), ...state.scenes.map((s) => s.name)]);
  renderOutputs(status);
}

// An output's buttons: stop or start it, remove it (POST /api/v1/outputs/{name}/{action}).
function outputButtons(output) {
  const actions = [output.state === 'stopped' ? 'start' : 'stop', 'remove'];
  return actions.map((action) => {
    const button = document.createElement('button');
    button.textContent = action;
    button.dataset.action = `output-${action}`;
    button.onclick = () => act(api('POST', `/api/v1/outputs/${encodeURIComponent(output.name)}/${action}`).then(refresh));
    return button;
  });
}

function renderOutputs(status) {
  const rows = [];
  for (const output of status.outputs || []) {
    const state = output.next_attempt_in_s == null ? output.state : `${output.state}, next attempt in ${Math.ceil(output.next_attempt_in_s)} s`;
    const rate = output.bits_per_second > 0 ? ` · ${(output.bits_per_second / 1e6).toFixed(2)} Mbit/s` : '';
    const origin = output.added_by ? `added by ${output.added_by}` : output.origin;
    rows.push([`${output.name} (${output.kind}, ${origin})`, state, `${(output.bytes_sent / 1e6).toFixed(1)} MB${rate}`,
      `drops ${output.dropped_video + output.dropped_audio}`, output.last_error || '', output]);
  }
  for (const iso of status.iso || []) rows.push([`ISO ${iso.camera}`, iso.state, `${(iso.bytes_written / 1e6).toFixed(1)} MB`, `skipped ${iso.frames_skipped}`, '']);
  const encoder = status.encoder || {};
  rows.push(['encoder', encoder.video, `${encoder.frames_encoded} frames`, `drops ${encoder.frames_dropped}`, encoder.fallback_reason || '']);
  if (status.disk) rows.push(['disk', status.disk.path, status.disk.free_bytes == null ? '?' : `${(status.disk.free_bytes / 1e9).toFixed(1)} GB free`, '', '']);
  const table = document.createElement('table');
  for (const row of rows) {
    const tr = table.insertRow();
    const output = typeof row[5] === 'object' ? row.pop() : null;
    for (const cell of row) tr.insertCell().textContent = cell ?? '';
    if (output) {
      tr.dataset.output = output.name;
      tr.dataset.state = output.state;
      tr.insertCell().replaceChildren(...outputButtons(output));
    }
  }
  $('#outputs').replaceChildren(table);
  const overlays = $('#overlays');
  overlays.replaceChildren(...((status.program || {}).overlays || []).map((overlay) => {
    const button = document.createElement('button');
    button.textContent = overlay.name;
    button.dataset.overlay = overlay.name;
    button.setAttribute('aria-pressed', String(overlay.on));
    button.onclick = () => act(api('POST', `/api/v1/overlay/${encodeURIComponent(overlay.name)}`, { on: !overlay.on }).then(refresh));
    return button;
  }));
}

// The program audio meter: peak as the bar, peak hold as the tick, on a -60..0 dBFS scale (the zones
// in console.css: green to -18, yellow to -6, red above). Polled 10 times a second from the small
// levels route; the meter carries data-peak-dbfs="L,R" (and each bar its own) for tests and scripts.
const meterRange = 60;
const meterPosition = (dbfs) => `${Math.min(100, Math.max(0, (dbfs + meterRange) / meterRange * 100))}%`;
// A level as the meters print it: to a tenth, "-inf" at or under the floor (silence).
const dbfsText = (value, floor) => (value <= floor ? '-inf' : value.toFixed(1));

function renderLevels(levels) {
  const meter = $('[data-meter="program"]');
  meter.dataset.peakDbfs = levels.peak_dbfs.join(',');
  meter.dataset.rmsDbfs = levels.rms_dbfs.join(',');
  meter.dataset.peakHoldDbfs = levels.peak_hold_dbfs.join(',');
  meter.querySelectorAll('.meter-bar').forEach((bar, channel) => {
    const peak = levels.peak_dbfs[channel] ?? levels.floor_dbfs, hold = levels.peak_hold_dbfs[channel] ?? levels.floor_dbfs;
    bar.dataset.peakDbfs = String(peak);
    $('.meter-cover', bar).style.width = `calc(100% - ${meterPosition(peak)})`;
    $('.meter-hold', bar).style.left = meterPosition(hold);
  });
  $('[data-field="peak"]', meter).textContent = `${levels.peak_dbfs.map((v) => dbfsText(v, levels.floor_dbfs)).join(' / ')} dBFS`;
}

// The program's EBU R128 loudness (the mixer's meter, from the audio route with the inputs): M, S and I
// in LUFS, LRA in LU, true peak in dBTP; each <b> carries its reading in data-value ("" while the meter
// has none: too little audio, or silence), shown to a tenth. The page's fields name the API's.
function renderLoudness(program) {
  for (const cell of document.querySelectorAll('#loudness [data-field]')) {
    const value = program[cell.dataset.field], none = value == null;  // null, or a field the reply lacks
    cell.dataset.value = none ? '' : String(value);
    cell.textContent = none ? '-' : value.toFixed(1);
  }
}

// A meter per mixer input (beside the program's), from the audio route 4 times a second: name, peak bar,
// RMS tick, mute button, gain (dB) and the camera or scene it follows (each applied on change). Each
// carries data-meter="NAME", data-peak-dbfs="L,R" and data-rms-dbfs="L,R" like the program meter; rows
// are kept by name, so a gain being typed or a choice being made is not replaced. Above them,
// #audio-silence says why the program is silence, while it is.
function renderAudioInputs(audio) {
  if (audio.program) renderLoudness(audio.program);
  // Why the program is silence (no microphone, no PipeWire daemon), as `studio audio` says it.
  const silence = $('#audio-silence');
  silence.hidden = !audio.silence_reason;
  silence.textContent = audio.silence_reason ? `Program audio is silence: ${audio.silence_reason}` : '';
  const section = $('#audio-inputs');
  const names = new Set();
  for (const input of audio.inputs || []) {
    names.add(input.name);
    let row = section.querySelector(`[data-meter="${CSS.escape(input.name)}"]`);
    if (!row) {
      row = document.createElement('div');
      row.className = 'input-meter';
      row.dataset.meter = input.name;
      row.innerHTML = '<span class="meter-label" data-field="name"></span>'
        + '<div class="meter-channels"><div class="meter-bar"><span class="meter-cover"></span><span class="meter-rms"></span></div></div>'
        + '<button data-action="mute" aria-pressed="false">mute</button>'
        + '<label>gain <input type="number" step="1" min="-60" max="24" data-field="gain"></label>'
        + '<label>follow <select data-field="follow"></select></label>';
      const path = `/api/v1/audio/${encodeURIComponent(input.name)}`;
      $('[data-action="mute"]', row).onclick = (event) =>
        act(api('POST', path, { mute: event.currentTarget.getAttribute('aria-pressed') !== 'true' }).then(renderAudioInputs));
      $('[data-field="gain"]', row).onchange = (event) => {
        const value = event.currentTarget.value.trim();
        act(api('POST', path, { gain: value === '' ? '-inf' : Number(value) }).then(renderAudioInputs));
      };
      $('[data-field="follow"]', row).onchange = (event) =>
        act(api('POST', path, { follow: event.currentTarget.value }).then(renderAudioInputs));
      section.append(row);
    }
    const peaks = input.levels.peak_dbfs, rms = input.levels.rms_dbfs, floor = input.levels.floor_dbfs;
    row.dataset.peakDbfs = peaks.join(',');
    row.dataset.rmsDbfs = rms.join(',');
    row.dataset.state = input.state;
    const peak = Math.max(floor, ...peaks), power = Math.max(floor, ...rms);
    $('.meter-cover', row).style.width = `calc(100% - ${meterPosition(peak)})`;
    $('.meter-rms', row).style.left = meterPosition(power);
    $('[data-field="name"]', row).textContent = input.name;
    row.title = `${input.source} (${input.state})${input.camera ? `, camera ${input.camera}` : ''}${input.follow ? `, follows ${input.follow}` : ''}`
      + `: peak ${dbfsText(peak, floor)}, RMS ${dbfsText(power, floor)} dBFS`;
    $('[data-action="mute"]', row).setAttribute('aria-pressed', String(input.muted));
    const gain = $('[data-field="gain"]', row);
    if (document.activeElement !== gain) gain.value = input.gain_db === null ? '' : String(input.gain_db);
    // Audio-follow-video: up only while the chosen camera or scene is on program ("none": always).
    const follow = $('[data-field="follow"]', row);
    if (document.activeElement !== follow) {
      const choices = ['none', ...state.cameras.map((c) => c.name), ...state.scenes.map((s) => s.name)];
      if (input.follow && !choices.includes(input.follow)) choices.push(input.follow);
      if ([...follow.options].map((o) => o.value).join() !== choices.join()) {
        follow.replaceChildren(...choices.map((name) => new Option(name, name)));
      }
      follow.value = input.follow || 'none';
    }
  }
  for (const row of section.querySelectorAll('[data-meter]')) if (!names.has(row.dataset.meter)) row.remove();
}

async function pollAudio() {
  try { renderAudioInputs(await api('GET', '/api/v1/audio')); } catch { /* the status poll reports trouble */ }
  setTimeout(pollAudio, 250);
}

async function pollLevels() {
  try { renderLevels(await api('GET', '/api/v1/levels')); } catch { /* the status poll reports trouble */ }
  setTimeout(pollLevels, 100);
}

async function refresh() {
  try {
    const [status, cameras, scenes] = await Promise.all([api('GET', '/api/v1/status'), api('GET', '/api/v1/cameras'), api('GET', '/api/v1/scenes')]);
    state.status = status;
    state.cameras = cameras.cameras || [];
    state.scenes = scenes.scenes || [];
    state.uptimeBase = { uptime: status.uptime_s, at: performance.now() };
    if (!state.selected && state.cameras.length) selectCamera(state.cameras[0].name);
    render();
  } catch (error) {
    say(`status: ${error.message}`);
  }
}

// The camera panel: its controls, applied as they change.
async function selectCamera(name) {
  if (state.selected === name) return;
  state.selected = name;
  $('#selected-camera').textContent = name;
  const box = $('#controls');
  box.replaceChildren();
  let controls = [];
  try { controls = (await api('GET', `/api/v1/camera/${encodeURIComponent(name)}/controls`)).controls || []; }
  catch (error) { box.textContent = error.message; return; }
  if (!controls.length) box.textContent = 'this camera has no controls';
  for (const control of controls) box.appendChild(controlInput(name, control));
}

function controlInput(camera, control) {
  const label = document.createElement('label');
  label.innerHTML = '<span></span>';
  label.firstChild.textContent = control.label || control.name;
  let input;
  if (control.type === 'boolean') {
    input = document.createElement('input');
    input.type = 'checkbox';
    input.checked = control.value === 1 || control.value === true;
  } else if (control.type === 'menu' || control.type === 'integer_menu') {
    input = document.createElement('select');
    for (const item of control.menu || []) input.add(new Option(item.name, item.index, false, item.index === control.value));
  } else if (control.type === 'button') {
    input = document.createElement('button');
    input.type = 'button';
    input.textContent = 'run';
  } else {
    input = document.createElement('input');
    input.type = 'range';
    Object.assign(input, { min: control.min, max: control.max, step: control.step || 1, value: control.value ?? control.default });
  }
  input.disabled = Boolean(control.read_only);
  const shown = document.createElement('output');
  shown.textContent = control.value_text ?? '';
  const apply = () => {
    const value = input.type === 'checkbox' ? (input.checked ? '1' : '0') : input.type === 'button' ? '1' : String(input.value);
    shown.textContent = value;
    act(api('POST', `/api/v1/camera/${encodeURIComponent(camera)}/controls`, { name: control.name, value }));
  };
  input.addEventListener(input.type === 'button' ? 'click' : 'change', apply);
  label.append(input, shown);
  return label;
}

// The focus cursor (as the seeds' tap-to-focus): drawn where the picture was clicked, scaling in and
// fading; the point goes to the camera, and the panel says what the camera could do.
function focusAt(tile, camera, event) {
  const img = event.target;
  const box = img.getBoundingClientRect();
  const aspect = img.naturalWidth && img.naturalHeight ? img.naturalWidth / img.naturalHeight : 16 / 9;
  let width = box.width, height = box.width / aspect;
  if (height > box.height) { height = box.height; width = height * aspect; }
  const left = box.left + (box.width - width) / 2, top = box.top + (box.height - height) / 2;
  const x = Math.min(1, Math.max(0, (event.clientX - left) / width));
  const y = Math.min(1, Math.max(0, (event.clientY - top) / height));
  const cursor = document.createElement('div');
  cursor.className = 'focus-cursor';
  cursor.dataset.role = 'focus-cursor';
  const tileBox = tile.getBoundingClientRect();
  cursor.style.left = `${event.clientX - tileBox.left}px`;
  cursor.style.top = `${event.clientY - tileBox.top}px`;
  tile.appendChild(cursor);
  requestAnimationFrame(() => requestAnimationFrame(() => cursor.classList.add('settled')));
  setTimeout(() => cursor.classList.add('faded'), 1000);
  setTimeout(() => cursor.remove(), 1400);
  api('POST', `/api/v1/camera/${encodeURIComponent(camera)}/focus`, { x, y }).then((reply) => {
    $('#focus-result').textContent = `focus at ${x.toFixed(2)}, ${y.toFixed(2)}: ${reply.method}${reply.reason ? ` (${reply.reason})` : ''}`;
    Object.assign($('#focus-result').dataset, { method: reply.method, x: reply.x, y: reply.y });
  }, (error) => { $('#focus-result').textContent = error.message; });
}

// Session clock and recent events, from the event stream; every event refreshes the state.
function startEvents() {
  const source = new EventSource(withToken('/api/v1/events'));
  source.onopen = () => { $('#connection').textContent = 'live'; };
  source.onerror = () => { $('#connection').textContent = 'reconnecting'; };
  source.onmessage = (message) => {
    let data;
    try { data = JSON.parse(message.data); } catch { return; }
    const event = data.event;
    if (event) {
      const item = document.createElement('li');
      item.textContent = `${event.kind}${event.camera ? ` ${event.camera}` : ''}${event.details ? ` ${JSON.stringify(event.details)}` : ''}`;
      $('#events').prepend(item);
      while ($('#events').children.length > 50) $('#events').lastChild.remove();
    }
    refresh();
  };
}

// The history: GET /api/v1/sessions lists the recent sessions; choosing one shows its timeline
// (GET /api/v1/sessions/{id}/timeline.svg, drawn by the server) beside its events
// (GET /api/v1/sessions/{id}/events). Hooks: data-role="history-sessions" (a button per session, with
// data-session), "history-timeline", "history-events" (a row per event, with data-kind).
const programTime = (ms) => {
  if (ms === null || ms === undefined) return '';
  const pad = (n, w = 2) => String(n).padStart(w, '0');
  const s = Math.floor(ms / 1000);
  return `${pad(Math.floor(s / 3600))}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}.${pad(ms % 1000, 3)}`;
};

async function loadHistory() {
  const reply = await api('GET', '/api/v1/sessions?limit=30');
  const list = $('#history-sessions');
  list.replaceChildren(...reply.sessions.map((session) => {
    const item = document.createElement('li');
    const button = document.createElement('button');
    button.dataset.session = session.id;
    const ended = session.ended_at ? session.end_reason : 'running';
    // A stopped session's program loudness (EBU R128 integrated, kept when it stopped): data-integrated-lufs.
    const loudness = session.integrated_lufs == null ? '' : session.integrated_lufs.toFixed(1);
    button.dataset.integratedLufs = loudness;
    button.textContent = `#${session.id} ${session.started_at.slice(0, 16).replace('T', ' ')} · ${ended} · ${session.switch_count} switches`
      + (loudness ? ` · ${loudness} LUFS` : '');
    button.addEventListener('click', () => act(showSession(session.id)));
    item.append(button);
    return item;
  }));
}

async function showSession(id) {
  for (const button of document.querySelectorAll('#history-sessions button')) {
    button.setAttribute('aria-pressed', String(button.dataset.session === String(id)));
  }
  $('#history-title').textContent = `session ${id}`;
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const [picture, log] = await Promise.all([
    fetch(`/api/v1/sessions/${id}/timeline.svg`, { headers }).then(async (response) => {
      if (!response.ok) throw new Error(`timeline of session ${id}: ${response.status}`);
      return response.text();
    }),
    api('GET', `/api/v1/sessions/${id}/events?limit=1000`),
  ]);
  const svg = new DOMParser().parseFromString(picture, 'image/svg+xml').documentElement;
  $('#history-timeline').replaceChildren(document.importNode(svg, true));
  const rows = log.events.map((event) => {
    const row = document.createElement('tr');
    row.dataset.kind = event.kind;
    for (const text of [programTime(event.program_ms), event.wall_time.slice(11, 19), event.kind, event.camera || '',
      Object.entries(event.details || {}).map(([key, value]) => `${key}=${value}`).join(' ')]) {
      const cell = document.createElement('td');
      cell.textContent = text;
      row.append(cell);
    }
    return row;
  });
  const head = document.createElement('tr');
  for (const text of ['program', 'wall', 'kind', 'camera', 'details']) {
    const cell = document.createElement('th');
    cell.textContent = text;
    head.append(cell);
  }
  $('#history-events').replaceChildren(head, ...rows);
}

function tickClock() {
  const base = state.uptimeBase;
  if (!base) return;
  const seconds = Math.floor(base.uptime + (performance.now() - base.at) / 1000);
  const pad = (n) => String(n).padStart(2, '0');
  $('#clock').textContent = `${pad(Math.floor(seconds / 3600))}:${pad(Math.floor(seconds / 60) % 60)}:${pad(seconds % 60)}`;
}

// A stinger lasts its clip: it takes no length (the server plays the configured one).
function transitionBody() {
  const kind = $('#transition-kind').value;
  return kind === 'stinger' ? { kind } : { kind, frames: Number($('#transition-frames').value) };
}

function actions() {
  const run = {
    cut: () => act(api('POST', '/api/v1/cut').then(refresh)),
    auto: () => act(api('POST', '/api/v1/auto', transitionBody()).then(refresh)),
  };
  for (const button of document.querySelectorAll('#switching [data-action]')) button.addEventListener('click', () => run[button.dataset.action]());
  $('[data-action="history-refresh"]').addEventListener('click', () => act(loadHistory()));
  // Adding an output: a URL, or the recording box (into the server's recording directory).
  $('#output-add').addEventListener('submit', (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const body = form.elements.record.checked ? { record: true } : { url: form.elements.url.value.trim() };
    act(api('POST', `/api/v1/outputs/${encodeURIComponent(form.elements.name.value.trim())}/add`, body).then(() => { form.reset(); return refresh(); }));
  });
  $('[data-role="preview"] img').addEventListener('click', (event) => {
    const camera = state.status && state.status.program.preview;
    if (camera && state.cameras.some((c) => c.name === camera)) { selectCamera(camera); focusAt($('[data-role="preview"]'), camera, event); }
  });
  document.addEventListener('keydown', (event) => {
    if (event.target.closest('input, select, textarea')) return;
    if (event.key >= '1' && event.key <= '9') {
      const camera = state.cameras[Number(event.key) - 1];
      if (camera) act(api('POST', '/api/v1/preview', { source: camera.name }).then(refresh));
    } else if (event.key === ' ') { event.preventDefault(); run.cut(); }
    else if (event.key === 'Enter') { event.preventDefault(); run.auto(); }
  });
}

actions();
refresh();
act(loadHistory());
pollLevels();
pollAudio();
startEvents();
setInterval(refresh, 1000);
setInterval(tickClock, 250);
