// Hopper (sm_90a) knowledge pack, every wrapper. Contracts: knowledge/sm90a/contract.md.
#pragma once

#include "knowledge/sm90a/base.cuh"
#include "knowledge/sm90a/cluster.cuh"
#include "knowledge/sm90a/fence.cuh"
#include "knowledge/sm90a/math.cuh"
#include "knowledge/sm90a/matrix_move.cuh"
#include "knowledge/sm90a/mbarrier.cuh"
#include "knowledge/sm90a/smem_desc.cuh"
#include "knowledge/sm90a/tma.cuh"
#include "knowledge/sm90a/warp.cuh"
#include "knowledge/sm90a/wgmma.cuh"
