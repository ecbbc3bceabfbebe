"""``mx.mod``: Module (one symbol, one executor) and BucketingModule, on one BaseModule."""
from mxcy.module.base_module import BaseModule
from mxcy.module.bucketing_module import BucketingModule
from mxcy.module.module import Module

__all__ = ['BaseModule', 'BucketingModule', 'Module']
