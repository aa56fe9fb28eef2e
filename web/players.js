'use strict';
// The players (`players:` in the config): a row each under the tiles (item, state, position, time
// left, the transport), and a countdown on each player's tile. The status comes with console.js's poll
// (`state.cameras`, each player's `player`); between polls a playing player's times move on by the
// page's clock, so the countdown runs smoothly and is put right at each poll.

const players = { cameras: null, at: 0 };

// 83500 ms: "1:23.5"; null: "--:--".
function clockText(ms) {
  if (ms == null) return '--:--';
  const tenths = Math.max(0, Math.floor(ms / 100)), seconds = Math.floor(tenths / 10);
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}.${tenths % 10}`;
}

// A player's position and time left now: what the last poll said, moved on while it plays.
function playerTimes(player) {
  const gone = player.state === 'playing' ? performance.now() - players.at : 0;
  const remaining = player.remaining_ms == null ? null : Math.max(0, player.remaining_ms - gone);
  return { position: player.position_ms + gone, remaining };
}

function playerRow(name) {
  const body = $('#players tbody');
  let row = body.querySelector(`[data-player="${CSS.escape(name)}"]`);
  if (row) return row;
  row = document.createElement('tr');
  row.dataset.player = name;
  row.innerHTML = '<th></th><td data-field="item"></td><td data-field="state"></td><td data-field="position"></td>'
    + '<td data-field="remaining"></td><td data-field="transport"></td>';
  $('th', row).textContent = name;
  for (const action of ['play', 'pause', 'stop', 'next']) {
    const button = document.createElement('button');
    button.textContent = action;
    button.dataset.action = `player-${action}`;
    button.onclick = () => act(api('POST', `/api/v1/player/${encodeURIComponent(name)}/${action}`).then(refresh));
    $('[data-field="transport"]', row).appendChild(button);
  }
  body.appendChild(row);
  return row;
}

// Each tenth of a second: the rows (rebuilt after a poll) and the tiles' countdowns.
function tickPlayers() {
  const cameras = state.cameras || [];
  if (cameras !== players.cameras) {
    players.cameras = cameras;
    players.at = performance.now();
    const names = new Set(cameras.filter((c) => c.player).map((c) => c.name));
    $('#players').hidden = names.size === 0;
    for (const row of $('#players tbody').querySelectorAll('[data-player]')) if (!names.has(row.dataset.player)) row.remove();
  }
  for (const camera of cameras) {
    const player = camera.player;
    if (!player) continue;
    const times = playerTimes(player), row = playerRow(camera.name);
    $('[data-field="item"]', row).textContent = `${player.item} (${player.item_number}/${player.items.length})`;
    $('[data-field="state"]', row).textContent = player.state;
    $('[data-field="position"]', row).textContent = clockText(times.position);
    $('[data-field="remaining"]', row).textContent = clockText(times.remaining);
    const tile = $('#tiles').querySelector(`[data-camera="${CSS.escape(camera.name)}"] figcaption`);
    if (!tile) continue;
    let countdown = $('.countdown', tile);
    if (!countdown) {
      countdown = document.createElement('span');
      countdown.className = 'countdown';
      countdown.title = 'time left of the item';
      tile.insertBefore(countdown, $('.state', tile));
    }
    countdown.dataset.state = player.state;
    countdown.textContent = `-${clockText(times.remaining)}`;
  }
}

setInterval(tickPlayers, 100);
