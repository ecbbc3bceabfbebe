"""``mx.mod``: Module (one symbol, one executor) and BucketingModule, on one BaseModule."""
from mxcy.module.base_module import BaseModule
from mxcy.module.module import Module
from mxcy.module.bucketing_module import BucketingModule

__all__ = ['BaseModule', 'BucketingModule', 'Module']
