// Settee's WebGL renderer, shared by the replay page (`settee view`) and the live studio
// (`settee studio`): plain WebGL 1, no library, so that both pages work offline.
//
// A scene is a list of *tracks* (vertex positions of one state or visual model, replaced every
// frame) and *layers* (triangles, lines or points over one track's vertices, each with its own
// index buffer, replaced when the topology changes). The page owns the data; the renderer keeps
// GPU buffers, the orbit camera and picking.
//
//   const r = SetteeRenderer.create(canvas, { gravity: [0, -9.81, 0], leftInset: () => 240 });
//   (`antialias: false` in the options: no multisampling, for software WebGL)
//   r.setScene({ tracks: [{ name, n }], layers: [{ node, label, kind, track, indices, color }] });
//   r.setTrack(0, float32Positions); r.setIndices(0, uint32Indices); r.draw();
//   const hit = r.pick(clientX, clientY);  // { layer, track, vertex, point } or null
"use strict";
(function (global) {
  const PALETTE = [[0.90, 0.45, 0.25], [0.30, 0.65, 0.95], [0.45, 0.80, 0.40], [0.85, 0.75, 0.30],
                   [0.75, 0.45, 0.85], [0.35, 0.80, 0.80], [0.95, 0.55, 0.65], [0.70, 0.70, 0.70]];

  // ---------- small vector/matrix helpers (column-major 4×4) ----------
  const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
  const add = (a, b) => [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
  const scale = (a, k) => [a[0] * k, a[1] * k, a[2] * k];
  const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const norm = (a) => { const l = Math.hypot(a[0], a[1], a[2]) || 1; return scale(a, 1 / l); };
  function lookAt(eye, target, up) {
    const f = norm(sub(target, eye)), s = norm(cross(f, up)), u = cross(s, f);
    return [s[0], u[0], -f[0], 0, s[1], u[1], -f[1], 0, s[2], u[2], -f[2], 0, -dot(s, eye), -dot(u, eye), dot(f, eye), 1];
  }
  function perspective(fovy, aspect, near, far) {
    const f = 1 / Math.tan(fovy / 2), nf = 1 / (near - far);
    return [f / aspect, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + near) * nf, -1, 0, 0, 2 * far * near * nf, 0];
  }
  function mul(a, b) {
    const o = new Array(16).fill(0);
    for (let c = 0; c < 4; c++) for (let r = 0; r < 4; r++) for (let k = 0; k < 4; k++) o[c * 4 + r] += a[k * 4 + r] * b[c * 4 + k];
    return o;
  }
  function transform(m, p) {
    const x = m[0] * p[0] + m[4] * p[1] + m[8] * p[2] + m[12];
    const y = m[1] * p[0] + m[5] * p[1] + m[9] * p[2] + m[13];
    const z = m[2] * p[0] + m[6] * p[1] + m[10] * p[2] + m[14];
    const w = m[3] * p[0] + m[7] * p[1] + m[11] * p[2] + m[15];
    return [x / w, y / w, z / w];
  }

  function create(canvas, opts) {
    opts = opts || {};
    const gl = canvas.getContext("webgl", { antialias: opts.antialias !== false, preserveDrawingBuffer: true });
    if (!gl) return null;
    const uint32 = gl.getExtension("OES_element_index_uint");

    function program(vs, fs) {
      const p = gl.createProgram();
      for (const [type, src] of [[gl.VERTEX_SHADER, vs], [gl.FRAGMENT_SHADER, fs]]) {
        const s = gl.createShader(type);
        gl.shaderSource(s, src);
        gl.compileShader(s);
        if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(s));
        gl.attachShader(p, s);
      }
      gl.linkProgram(p);
      if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(p));
      return p;
    }
    // Flat-shaded triangles: one normal per face, lit from the camera's side and two-sided
    // (mesh orientations vary).
    const triProg = program(
      "attribute vec3 p; attribute vec3 n; uniform mat4 mvp; uniform mat4 view; varying vec3 vn;" +
      "void main() { vn = (view * vec4(n, 0.0)).xyz; gl_Position = mvp * vec4(p, 1.0); }",
      "precision mediump float; uniform vec4 color; varying vec3 vn;" +
      "void main() { vec3 nn = normalize(vn); float d = abs(dot(nn, normalize(vec3(0.3, 0.5, 1.0))));" +
      " gl_FragColor = vec4(color.rgb * (0.25 + 0.75 * d), color.a); }");
    const flatProg = program(
      "attribute vec3 p; uniform mat4 mvp; uniform float size; void main() { gl_Position = mvp * vec4(p, 1.0); gl_PointSize = size; }",
      "precision mediump float; uniform vec4 color; void main() { gl_FragColor = color; }");

    let tracks = [], layers = [], overlays = [];
    // Up is against gravity (SOFA scenes use any axis); e1, e2 span the horizontal plane.
    let up = [0, 1, 0], e1 = [1, 0, 0], e2 = [0, 0, 1];
    const cam = { yaw: 0.6, pitch: 0.35, dist: 3, target: [0, 0, 0], radius: 1 };
    let matrices = null;

    function setGravity(g) {
      g = g || [0, -9.81, 0];
      up = Math.hypot(g[0], g[1], g[2]) > 0 ? norm(scale(g, -1)) : [0, 1, 0];
      e1 = norm(Math.abs(up[0]) < 0.9 ? cross(up, [1, 0, 0]) : cross(up, [0, 1, 0]));
      e2 = cross(e1, up);
    }
    setGravity(opts.gravity);

    // Replaces the drawn items. `tracks`: [{ name, n }]; `layers`: [{ node, label, kind
    // ("triangles" | "lines" | "points"), track, indices (Uint32Array), color ([r, g, b] or
    // [r, g, b, a], default from the palette), visible (default true) }].
    function setScene(scene) {
      for (const l of layers) { for (const b of [l.buf, l.nbuf, l.ibuf]) if (b) gl.deleteBuffer(b); }
      tracks = scene.tracks.map((t) => ({ name: t.name, n: t.n, pos: new Float32Array(3 * t.n), dirty: true }));
      layers = scene.layers.map((l, i) => {
        const c = l.color || PALETTE[i % PALETTE.length];
        return {
          node: l.node, label: l.label, kind: l.kind, track: l.track, idx: l.indices || new Uint32Array(0),
          color: c.length === 4 ? c.slice() : [c[0], c[1], c[2], 1], visible: l.visible !== false,
          buf: gl.createBuffer(), nbuf: l.kind === "triangles" ? gl.createBuffer() : null,
          ibuf: l.kind === "lines" ? gl.createBuffer() : null, dirty: true,
        };
      });
    }

    // New positions for track `i` (3 floats per vertex); the vertex count may change
    // (topological changes).
    function setTrack(i, positions) {
      const t = tracks[i];
      t.pos = positions; t.n = positions.length / 3; t.dirty = true;
    }
    // New elements for layer `i` (topological changes).
    function setIndices(i, indices) { layers[i].idx = indices; layers[i].dirty = true; }
    function setVisible(i, v) { layers[i].visible = v; }

    // Frames the camera on the box [lo, hi] (default: the current positions of every track).
    function fit(lo, hi) {
      if (!lo) {
        lo = [Infinity, Infinity, Infinity]; hi = [-Infinity, -Infinity, -Infinity];
        for (const t of tracks) {
          for (let i = 0; i < 3 * t.n; i += 3) {
            for (let a = 0; a < 3; a++) {
              const v = t.pos[i + a];
              if (isFinite(v)) { if (v < lo[a]) lo[a] = v; if (v > hi[a]) hi[a] = v; }
            }
          }
        }
      }
      if (!(lo[0] <= hi[0])) { lo = [-1, -1, -1]; hi = [1, 1, 1]; }
      cam.target = [0, 1, 2].map((a) => 0.5 * (lo[a] + hi[a]));
      cam.radius = Math.max(1e-6, 0.5 * Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]));
      cam.dist = 3.2 * cam.radius;
    }

    // Triangles are unrolled (3 vertices each) with their face normal; lines and points use
    // the track's positions as they are.
    function upload(l) {
      const t = tracks[l.track], P = t.pos;
      if (l.kind === "triangles") {
        const m = l.idx.length, v = new Float32Array(3 * m), nn = new Float32Array(3 * m);
        for (let i = 0; i + 2 < m; i += 3) {
          const a = 3 * l.idx[i], b = 3 * l.idx[i + 1], c = 3 * l.idx[i + 2];
          const ux = P[b] - P[a], uy = P[b + 1] - P[a + 1], uz = P[b + 2] - P[a + 2];
          const wx = P[c] - P[a], wy = P[c + 1] - P[a + 1], wz = P[c + 2] - P[a + 2];
          let nx = uy * wz - uz * wy, ny = uz * wx - ux * wz, nz = ux * wy - uy * wx;
          const len = Math.hypot(nx, ny, nz) || 1; nx /= len; ny /= len; nz /= len;
          for (let k = 0; k < 3; k++) {
            const s = k === 0 ? a : k === 1 ? b : c, o = 3 * (i + k);
            v[o] = P[s]; v[o + 1] = P[s + 1]; v[o + 2] = P[s + 2];
            nn[o] = nx; nn[o + 1] = ny; nn[o + 2] = nz;
          }
        }
        gl.bindBuffer(gl.ARRAY_BUFFER, l.buf); gl.bufferData(gl.ARRAY_BUFFER, v, gl.DYNAMIC_DRAW);
        gl.bindBuffer(gl.ARRAY_BUFFER, l.nbuf); gl.bufferData(gl.ARRAY_BUFFER, nn, gl.DYNAMIC_DRAW);
      } else {
        gl.bindBuffer(gl.ARRAY_BUFFER, l.buf);
        gl.bufferData(gl.ARRAY_BUFFER, P.subarray(0, 3 * t.n), gl.DYNAMIC_DRAW);
        if (l.kind === "lines") {
          gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, l.ibuf);
          gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, uint32 ? l.idx : new Uint16Array(l.idx), gl.DYNAMIC_DRAW);
        }
      }
      l.dirty = false;
    }

    // Extra lines drawn over the scene (contacts, the mouse spring): [{ positions
    // (Float32Array, 2 points per segment), color }].
    function setOverlay(items) {
      for (const o of overlays) gl.deleteBuffer(o.buf);
      overlays = items.map((o) => {
        const buf = gl.createBuffer();
        gl.bindBuffer(gl.ARRAY_BUFFER, buf);
        gl.bufferData(gl.ARRAY_BUFFER, o.positions, gl.DYNAMIC_DRAW);
        const c = o.color || [1, 1, 0];
        return { buf, n: o.positions.length / 3, color: c.length === 4 ? c : [c[0], c[1], c[2], 1], kind: o.kind || "lines" };
      });
    }

    function attrib(prog, name, buf) {
      const loc = gl.getAttribLocation(prog, name);
      gl.bindBuffer(gl.ARRAY_BUFFER, buf);
      gl.enableVertexAttribArray(loc);
      gl.vertexAttribPointer(loc, 3, gl.FLOAT, false, 0, 0);
      return loc;
    }

    function viewDir() {
      return add(scale(add(scale(e1, Math.sin(cam.yaw)), scale(e2, Math.cos(cam.yaw))), Math.cos(cam.pitch)), scale(up, Math.sin(cam.pitch)));
    }

    function draw() {
      for (const t of tracks) {
        if (!t.dirty) continue;
        for (const l of layers) if (l.track === tracks.indexOf(t)) l.dirty = true;
        t.dirty = false;
      }
      for (const l of layers) if (l.dirty) upload(l);
      const dpr = window.devicePixelRatio || 1;
      const w = Math.max(1, Math.floor(canvas.clientWidth * dpr)), h = Math.max(1, Math.floor(canvas.clientHeight * dpr));
      if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
      gl.viewport(0, 0, w, h);
      gl.clearColor(0.118, 0.133, 0.165, 1);
      gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
      gl.enable(gl.DEPTH_TEST);
      const eye = add(cam.target, scale(viewDir(), cam.dist));
      const view = lookAt(eye, cam.target, up);
      const proj = perspective(0.8, w / h, cam.dist * 0.01, cam.dist + 4 * cam.radius);
      // Centre the scene in the part of the canvas the page's panel leaves free (on wide pages).
      const inset = opts.leftInset ? opts.leftInset() : 0;
      if (inset > 0 && canvas.clientWidth > 2.5 * inset) proj[8] -= inset / canvas.clientWidth;
      const mvp = mul(proj, view);
      matrices = { mvp, view, eye, w: canvas.clientWidth, h: canvas.clientHeight };
      // Opaque layers first, then the translucent ones without depth writes.
      const order = layers.filter((l) => l.visible && l.color[3] >= 1).concat(layers.filter((l) => l.visible && l.color[3] < 1));
      for (const l of order) {
        const translucent = l.color[3] < 1;
        if (translucent) { gl.enable(gl.BLEND); gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA); gl.depthMask(false); }
        if (l.kind === "triangles") {
          gl.useProgram(triProg);
          gl.uniformMatrix4fv(gl.getUniformLocation(triProg, "mvp"), false, mvp);
          gl.uniformMatrix4fv(gl.getUniformLocation(triProg, "view"), false, view);
          gl.uniform4fv(gl.getUniformLocation(triProg, "color"), l.color);
          const a = attrib(triProg, "p", l.buf), b = attrib(triProg, "n", l.nbuf);
          gl.drawArrays(gl.TRIANGLES, 0, l.idx.length - (l.idx.length % 3));
          gl.disableVertexAttribArray(a); gl.disableVertexAttribArray(b);
        } else {
          gl.useProgram(flatProg);
          gl.uniformMatrix4fv(gl.getUniformLocation(flatProg, "mvp"), false, mvp);
          gl.uniform4fv(gl.getUniformLocation(flatProg, "color"), l.color);
          gl.uniform1f(gl.getUniformLocation(flatProg, "size"), 7 * dpr);
          const a = attrib(flatProg, "p", l.buf);
          if (l.kind === "lines") {
            gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, l.ibuf);
            gl.drawElements(gl.LINES, l.idx.length, uint32 ? gl.UNSIGNED_INT : gl.UNSIGNED_SHORT, 0);
          } else {
            gl.drawArrays(gl.POINTS, 0, tracks[l.track].n);
          }
          gl.disableVertexAttribArray(a);
        }
        if (translucent) { gl.disable(gl.BLEND); gl.depthMask(true); }
      }
      gl.disable(gl.DEPTH_TEST);
      for (const o of overlays) {
        gl.useProgram(flatProg);
        gl.uniformMatrix4fv(gl.getUniformLocation(flatProg, "mvp"), false, mvp);
        gl.uniform4fv(gl.getUniformLocation(flatProg, "color"), o.color);
        gl.uniform1f(gl.getUniformLocation(flatProg, "size"), 6 * dpr);
        const a = attrib(flatProg, "p", o.buf);
        gl.drawArrays(o.kind === "points" ? gl.POINTS : gl.LINES, 0, o.n);
        gl.disableVertexAttribArray(a);
      }
    }

    // The ray under a point of the canvas (client coordinates): its origin and direction.
    function ray(clientX, clientY) {
      if (!matrices) draw();
      const rect = canvas.getBoundingClientRect();
      const x = 2 * (clientX - rect.left) / rect.width - 1, y = 1 - 2 * (clientY - rect.top) / rect.height;
      const inv = invert(matrices.mvp);
      const a = transform(inv, [x, y, -1]), b = transform(inv, [x, y, 1]);
      return { origin: a, dir: norm(sub(b, a)) };
    }

    // The nearest drawn, visible element under a point of the canvas: for triangles the
    // surface point hit and the triangle's vertex nearest to it, for lines and points the
    // vertex nearest to the ray within 8 pixels. `{ layer, track, vertex, point }` or null.
    function pick(clientX, clientY) {
      const { origin, dir } = ray(clientX, clientY);
      let best = null;
      for (let li = 0; li < layers.length; li++) {
        const l = layers[li];
        if (!l.visible) continue;
        const P = tracks[l.track].pos;
        const at = (k) => [P[3 * k], P[3 * k + 1], P[3 * k + 2]];
        if (l.kind === "triangles") {
          for (let i = 0; i + 2 < l.idx.length; i += 3) {
            const ia = l.idx[i], ib = l.idx[i + 1], ic = l.idx[i + 2];
            const a = at(ia), b = at(ib), c = at(ic);
            // Möller–Trumbore.
            const e1 = sub(b, a), e2 = sub(c, a), p = cross(dir, e2), det = dot(e1, p);
            if (Math.abs(det) < 1e-20) continue;
            const s = sub(origin, a), u = dot(s, p) / det;
            if (u < 0 || u > 1) continue;
            const q = cross(s, e1), v = dot(dir, q) / det;
            if (v < 0 || u + v > 1) continue;
            const t = dot(e2, q) / det;
            if (t <= 0 || (best && t >= best.t)) continue;
            const w = 1 - u - v, vertex = w >= u && w >= v ? ia : u >= v ? ib : ic;
            best = { t, layer: li, track: l.track, vertex, point: add(origin, scale(dir, t)) };
          }
        } else {
          const n = tracks[l.track].n, tol = 8 * cam.dist / Math.max(1, matrices.h);
          const candidates = l.kind === "lines" ? l.idx : null;
          const count = candidates ? candidates.length : n;
          for (let j = 0; j < count; j++) {
            const k = candidates ? candidates[j] : j, x = at(k), t = dot(sub(x, origin), dir);
            if (t <= 0) continue;
            const d = Math.hypot(...sub(x, add(origin, scale(dir, t))));
            if (d > tol * t / cam.dist || (best && t >= best.t)) continue;
            best = { t, layer: li, track: l.track, vertex: k, point: x };
          }
        }
      }
      return best;
    }

    // The point under the cursor on the plane through `ref` facing the camera (what a
    // dragged point follows).
    function screenToWorld(clientX, clientY, ref) {
      const { origin, dir } = ray(clientX, clientY), n = norm(sub(matrices.eye, cam.target));
      const denom = dot(dir, n);
      if (Math.abs(denom) < 1e-12) return ref.slice();
      return add(origin, scale(dir, dot(sub(ref, origin), n) / denom));
    }

    // The client coordinates of a world point (the inverse of `pick`'s ray), or null when it
    // is behind the camera.
    function worldToScreen(p) {
      if (!matrices) draw();
      const m = matrices.mvp;
      const w = m[3] * p[0] + m[7] * p[1] + m[11] * p[2] + m[15];
      if (w <= 0) return null;
      const q = transform(m, p), rect = canvas.getBoundingClientRect();
      return [rect.left + (q[0] + 1) / 2 * rect.width, rect.top + (1 - q[1]) / 2 * rect.height];
    }

    // Orbit camera: drag rotates, shift-, ctrl- or right-drag pans, the wheel zooms.
    // `opts.onPointerDown(event)` may take a press for itself (return true), e.g. to pick.
    function attachControls() {
      let drag = null;
      canvas.addEventListener("contextmenu", (e) => e.preventDefault());
      canvas.addEventListener("mousedown", (e) => {
        if (opts.onPointerDown && opts.onPointerDown(e)) return;
        drag = { x: e.clientX, y: e.clientY, pan: e.shiftKey || e.ctrlKey || e.button === 2 };
      });
      window.addEventListener("mouseup", () => { drag = null; });
      window.addEventListener("mousemove", (e) => {
        if (!drag) return;
        const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
        drag.x = e.clientX; drag.y = e.clientY;
        if (drag.pan) {
          const d = viewDir(), right = norm(cross(up, d)), upv = cross(d, right), k = cam.dist / canvas.clientHeight;
          cam.target = add(cam.target, add(scale(right, -dx * k), scale(upv, dy * k)));
        } else {
          cam.yaw -= dx * 0.01;
          cam.pitch = Math.max(-1.55, Math.min(1.55, cam.pitch + dy * 0.01));
        }
        draw();
      });
      canvas.addEventListener("wheel", (e) => {
        e.preventDefault();
        cam.dist *= Math.exp(e.deltaY * 0.001);
        draw();
      }, { passive: false });
      window.addEventListener("resize", draw);
    }

    return {
      gl, camera: cam, setGravity, setScene, setTrack, setIndices, setVisible, setOverlay, fit, draw, pick,
      screenToWorld, worldToScreen, attachControls,
      get layers() { return layers; }, get tracks() { return tracks; },
    };
  }

  // Inverse of a 4×4 matrix (cofactors), for unprojecting the cursor.
  function invert(m) {
    const inv = new Array(16);
    inv[0] = m[5] * m[10] * m[15] - m[5] * m[11] * m[14] - m[9] * m[6] * m[15] + m[9] * m[7] * m[14] + m[13] * m[6] * m[11] - m[13] * m[7] * m[10];
    inv[4] = -m[4] * m[10] * m[15] + m[4] * m[11] * m[14] + m[8] * m[6] * m[15] - m[8] * m[7] * m[14] - m[12] * m[6] * m[11] + m[12] * m[7] * m[10];
    inv[8] = m[4] * m[9] * m[15] - m[4] * m[11] * m[13] - m[8] * m[5] * m[15] + m[8] * m[7] * m[13] + m[12] * m[5] * m[11] - m[12] * m[7] * m[9];
    inv[12] = -m[4] * m[9] * m[14] + m[4] * m[10] * m[13] + m[8] * m[5] * m[14] - m[8] * m[6] * m[13] - m[12] * m[5] * m[10] + m[12] * m[6] * m[9];
    inv[1] = -m[1] * m[10] * m[15] + m[1] * m[11] * m[14] + m[9] * m[2] * m[15] - m[9] * m[3] * m[14] - m[13] * m[2] * m[11] + m[13] * m[3] * m[10];
    inv[5] = m[0] * m[10] * m[15] - m[0] * m[11] * m[14] - m[8] * m[2] * m[15] + m[8] * m[3] * m[14] + m[12] * m[2] * m[11] - m[12] * m[3] * m[10];
    inv[9] = -m[0] * m[9] * m[15] + m[0] * m[11] * m[13] + m[8] * m[1] * m[15] - m[8] * m[3] * m[13] - m[12] * m[1] * m[11] + m[12] * m[3] * m[9];
    inv[13] = m[0] * m[9] * m[14] - m[0] * m[10] * m[13] - m[8] * m[1] * m[14] + m[8] * m[2] * m[13] + m[12] * m[1] * m[10] - m[12] * m[2] * m[9];
    inv[2] = m[1] * m[6] * m[15] - m[1] * m[7] * m[14] - m[5] * m[2] * m[15] + m[5] * m[3] * m[14] + m[13] * m[2] * m[7] - m[13] * m[3] * m[6];
    inv[6] = -m[0] * m[6] * m[15] + m[0] * m[7] * m[14] + m[4] * m[2] * m[15] - m[4] * m[3] * m[14] - m[12] * m[2] * m[7] + m[12] * m[3] * m[6];
    inv[10] = m[0] * m[5] * m[15] - m[0] * m[7] * m[13] - m[4] * m[1] * m[15] + m[4] * m[3] * m[13] + m[12] * m[1] * m[7] - m[12] * m[3] * m[5];
    inv[14] = -m[0] * m[5] * m[14] + m[0] * m[6] * m[13] + m[4] * m[1] * m[14] - m[4] * m[2] * m[13] - m[12] * m[1] * m[6] + m[12] * m[2] * m[5];
    inv[3] = -m[1] * m[6] * m[11] + m[1] * m[7] * m[10] + m[5] * m[2] * m[11] - m[5] * m[3] * m[10] - m[9] * m[2] * m[7] + m[9] * m[3] * m[6];
    inv[7] = m[0] * m[6] * m[11] - m[0] * m[7] * m[10] - m[4] * m[2] * m[11] + m[4] * m[3] * m[10] + m[8] * m[2] * m[7] - m[8] * m[3] * m[6];
    inv[11] = -m[0] * m[5] * m[11] + m[0] * m[7] * m[9] + m[4] * m[1] * m[11] - m[4] * m[3] * m[9] - m[8] * m[1] * m[7] + m[8] * m[3] * m[5];
    inv[15] = m[0] * m[5] * m[10] - m[0] * m[6] * m[9] - m[4] * m[1] * m[10] + m[4] * m[2] * m[9] + m[8] * m[1] * m[6] - m[8] * m[2] * m[5];
    const det = m[0] * inv[0] + m[1] * inv[4] + m[2] * inv[8] + m[3] * inv[12];
    return inv.map((v) => v / (det || 1));
  }

  global.SetteeRenderer = { create, PALETTE };
})(window);
