#!/usr/bin/env python2

kRelMetrics = ['rel_trans', 'rel_trans_perc', 'rel_yaw',
               'rel_rot', 'rel_gravity', 'rel_rot_deg_per_m']
kRelMetricLables = ['trans', 'trans_perc', 'yaw',
                    'rot', 'gravity', 'rot_deg_per_m']
