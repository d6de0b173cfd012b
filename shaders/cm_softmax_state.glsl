// The online-softmax state of the register-softmax bodies
// (flash_coopmat_rs_body.glsl, flash_decode_mma_body.glsl), declared where
// included in main(): O accumulators (RT x OT), and per row statistic slot
// the running max (base 2, scaled) and this lane's part of the row sum, which
// cm_softmax_pv.glsl updates. Never compiled alone.
    CM_C oacc[RT * OT];
    [[unroll]] for (uint x = 0u; x < RT * OT; ++x) oacc[x] = CM_C_ZERO;
    float m_i[NSTAT], l_i[NSTAT]; // running max (base 2, scaled) and this lane's part of the row sum
    [[unroll]] for (uint x = 0u; x < NSTAT; ++x) {
        m_i[x] = NEG_INF;
        l_i[x] = 0.0;
    }
