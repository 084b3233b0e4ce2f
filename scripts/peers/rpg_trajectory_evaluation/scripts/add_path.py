#!/usr/bin/env python2

import os
import sys
sys.path.append(
    os.path.join(os.path.dirname(os.path.abspath(__file__)),
                 '../src/rpg_trajectory_evaluation'))
