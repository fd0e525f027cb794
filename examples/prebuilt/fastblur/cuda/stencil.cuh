// The blur's footprint: 2 * RADIUS + 1 pixels of a row (fastblur::RADIUS says the same).
#pragma once
#define RADIUS 2

__device__ inline int clamp_x(int x, int width) { return x < 0 ? 0 : (x >= width ? width - 1 : x); }
