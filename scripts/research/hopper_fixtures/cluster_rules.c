// Launch each PTX kernel with a grid and an optional cluster attribute through
// cuLaunchKernelEx; print the driver's result and what CTA 0 read from
// %cluster_nctarank, %is_explicit_cluster, %cluster_ctarank.
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static char *slurp(const char *p){FILE*f=fopen(p,"rb");if(!f)return 0;fseek(f,0,2);long n=ftell(f);fseek(f,0,0);char*b=calloc(n+1,1);fread(b,1,n,f);fclose(f);return b;}
int main(int argc,char**argv){
  cuInit(0); CUdevice d; cuDeviceGet(&d,0); CUcontext c; cuDevicePrimaryCtxRetain(&c,d); cuCtxSetCurrent(c);
  const char *files[]={"req2","max2","expl","none","req2expl","req16","req9","max16","max0","req0"};
  int grids[]={4,3,16,6};
  int cl[][3]={{0,0,0},{1,1,1},{2,1,1},{4,1,1},{3,3,1},{8,1,1},{16,1,1}};
  printf("[\n"); int first=1;
  for(int fi=0;fi<10;fi++){
    char p[64]; snprintf(p,64,"%s.ptx",files[fi]); char*src=slurp(p);
    CUmodule m; CUresult r=cuModuleLoadData(&m,src);
    if(r){const char*s;cuGetErrorName(r,&s);printf("%s{\"ptx\":\"%s\",\"load\":\"%s\"}\n",first?"":",",files[fi],s);first=0;continue;}
    CUfunction fn; cuModuleGetFunction(&fn,m,"k");
    for(int gi=0;gi<4;gi++)for(int ci=0;ci<7;ci++){
      CUdeviceptr out; cuMemAlloc(&out,16*64); cuMemsetD8(out,0xff,16*64);
      CUlaunchConfig cfg; memset(&cfg,0,sizeof cfg);
      cfg.gridDimX=grids[gi];cfg.gridDimY=(cl[ci][1]==3)?3:1;cfg.gridDimZ=1;cfg.blockDimX=32;cfg.blockDimY=1;cfg.blockDimZ=1;
      CUlaunchAttribute at; memset(&at,0,sizeof at);
      if(cl[ci][0]){at.id=CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;at.value.clusterDim.x=cl[ci][0];at.value.clusterDim.y=cl[ci][1];at.value.clusterDim.z=cl[ci][2];cfg.attrs=&at;cfg.numAttrs=1;}
      void*args[]={&out};
      CUresult lr=cuLaunchKernelEx(&cfg,fn,args,0); CUresult sr=cuCtxSynchronize();
      unsigned h[4]={0,0,0,0}; if(!lr&&!sr)cuMemcpyDtoH(h,out,16);
      const char*ls,*ss;cuGetErrorName(lr,&ls);cuGetErrorName(sr,&ss);
      printf("%s{\"ptx\":\"%s\",\"grid\":[%d,%d,1],\"cluster_attr\":[%d,%d,%d],\"launch\":\"%s\",\"sync\":\"%s\",\"cta0\":{\"cluster_nctarank\":%u,\"is_explicit_cluster\":%u,\"cluster_ctarank\":%u}}\n",
        first?"":",",files[fi],cfg.gridDimX,cfg.gridDimY,cl[ci][0],cl[ci][1],cl[ci][2],ls,ss,h[0],h[1],h[2]);
      first=0; cuMemFree(out);
      if(sr){cuDevicePrimaryCtxReset(d);cuDevicePrimaryCtxRetain(&c,d);cuCtxSetCurrent(c);cuModuleLoadData(&m,src);cuModuleGetFunction(&fn,m,"k");}
    }
  }
  printf("]\n"); return 0;}
