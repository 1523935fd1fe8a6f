#!/usr/bin/env python3
"""Vector-load records built around the lane-pair packing rule, in the replay format, for
`tilelab verify --records FILE`: lanes n and n^k share addresses (k = 1, 2, 3, 4, 8, 16), random
masks, then one pair broken, or broken with its partner switched off. Usage:
    python3 scripts/research/gen_pair_records.py pairs.json
"""
import json, random, sys
random.seed(2029)
recs=[]
for ins,w in [("ld.shared.v2.b32",8),("ld.shared.v4.b32",16)]:
    t=ins[10:12]
    for xor in [1,2,3,4,8,16]:
        for rep in range(18):
            # pair structure: lanes n and n^xor share an address
            offs=[None]*32
            for n in range(32):
                if offs[n] is None:
                    a=random.randrange(0, 12*1024//w)*w
                    offs[n]=a; offs[n^xor]=a
            dens=random.choice([1.0,0.8,0.5,0.3])
            mask=0
            for n in range(32):
                if random.random()<dens: mask|=1<<n
            if mask==0: mask=1
            kind='pure'
            if rep%3==1:
                # break one active pair
                cands=[n for n in range(32) if mask>>n&1 and mask>>(n^xor)&1]
                if cands:
                    n=random.choice(cands); offs[n]=(offs[n]+w*random.randrange(1,64))%(12*1024); kind='broken'
            elif rep%3==2:
                # make the partner of one broken pair inactive: still packed under the rule
                cands=[n for n in range(32) if mask>>n&1 and mask>>(n^xor)&1]
                if cands:
                    n=random.choice(cands); offs[n]=(offs[n]+w*random.randrange(1,64))%(12*1024); mask&=~(1<<(n^xor)); kind='brokenoff'
            r={"name":f"pairs.{t}.x{xor}.{kind}.{rep}","instruction":ins,"lane_byte_offsets":offs}
            if mask!=0xffffffff: r["active_mask"]=mask
            recs.append(r)
json.dump(recs, open(sys.argv[1] if len(sys.argv) > 1 else 'pairs.json', 'w'), indent=0)
print(len(recs))
