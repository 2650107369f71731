// Blackwell (sm_100a) knowledge pack, every wrapper. Contracts: knowledge/sm100a/contract.md.
#pragma once

#include "knowledge/sm100a/base.cuh"
#include "knowledge/sm100a/math.cuh"
#include "knowledge/sm100a/sync.cuh"
#include "knowledge/sm100a/tcgen05.cuh"
#include "knowledge/sm100a/tma.cuh"
#include "knowledge/sm100a/umma_desc.cuh"
